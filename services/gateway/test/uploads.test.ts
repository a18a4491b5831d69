import { readFileSync } from 'node:fs';
import { readdir } from 'node:fs/promises';
import { connect } from 'node:net';
import { api, type VideoFixture, videoFixture } from '@svc/testing';
import { type Stack, startStack } from '@svc/testing/stack';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';

/**
 * Resumable uploads (tus 1.0.0: core, creation, termination, expiration) end to end: the gateway
 * streams each PATCH to publishing in parts, the last byte makes the media (read from its bytes
 * like any upload), a connection broken halfway keeps what arrived, and an upload belongs to one
 * partner and workspace.
 */
let stack: Stack;
let key: string;
let call: ReturnType<typeof api>;
let workspace: string;

const TUS = { 'tus-resumable': '1.0.0' };
const fixture = (name: VideoFixture) => readFileSync(videoFixture(name));
const b64 = (text: string) => Buffer.from(text).toString('base64');

beforeAll(async () => {
  stack = await startStack({ MEDIA_VIDEO_MAX_BYTES: '1000000' });
  key = (await stack.createPartner()).key;
  call = api(stack.gateway.url, key);
  workspace = (await call('POST', '/v1/workspaces', { name: 'uploads' })).body.id;
});
afterAll(() => stack.stop());

function tus(path: string, method: string, headers: Record<string, string> = {}, body?: Buffer, as = key) {
  return fetch(`${stack.gateway.url}${path}`, {
    method,
    headers: { authorization: `Bearer ${as}`, ...TUS, ...headers },
    body,
  });
}

async function create(length: number, options: { ws?: string; as?: string; filename?: string } = {}) {
  const metadata = [`workspace ${b64(options.ws ?? workspace)}`];
  if (options.filename) metadata.push(`filename ${b64(options.filename)}`);
  return tus(
    '/v1/uploads',
    'POST',
    { 'upload-length': String(length), 'upload-metadata': metadata.join(',') },
    undefined,
    options.as,
  );
}

const patch = (location: string, offset: number, bytes: Buffer, as = key) =>
  tus(
    location,
    'PATCH',
    { 'content-type': 'application/offset+octet-stream', 'upload-offset': String(offset) },
    bytes,
    as,
  );

const offsetOf = async (location: string) =>
  Number((await tus(location, 'HEAD')).headers.get('upload-offset'));

const errorOf = async (res: Response) =>
  ((await res.json()) as { error: { code: string; field?: string; message: string } }).error;

describe('tus uploads', () => {
  // Guarantee: OPTIONS tells a tus client the version, extensions and largest size, without a key.
  it('answers its capabilities', async () => {
    const res = await fetch(`${stack.gateway.url}/v1/uploads`, { method: 'OPTIONS' });
    expect(res.status).toBe(204);
    expect(res.headers.get('tus-version')).toBe('1.0.0');
    expect(res.headers.get('tus-extension')).toBe('creation,termination,expiration');
    expect(res.headers.get('tus-max-size')).toBe('1000000');
  });

  // Guarantee: an upload sent in two PATCHes (half, HEAD, the rest) completes as a video media
  // with its facts; the last PATCH names it in Media-Id and GET shows it; the stored file is the
  // upload; once the media is deleted the upload is not found.
  it('completes an upload sent in two parts', async () => {
    const bytes = fixture('reel-h264-aac.mp4');
    const created = await create(bytes.length, { filename: 'reel.mp4' });
    expect(created.status).toBe(201);
    expect(created.headers.get('tus-resumable')).toBe('1.0.0');
    expect(created.headers.get('upload-expires')).toMatch(/GMT$/);
    const location = created.headers.get('location') ?? '';
    expect(location).toMatch(/^\/v1\/uploads\/upl_[0-9A-Za-z]{25}$/);
    const half = Math.floor(bytes.length / 2);
    const first = await patch(location, 0, bytes.subarray(0, half));
    expect(first.status).toBe(204);
    expect(first.headers.get('upload-offset')).toBe(String(half));
    expect(first.headers.get('media-id')).toBeNull();
    const head = await tus(location, 'HEAD');
    expect(head.headers.get('upload-offset')).toBe(String(half));
    expect(head.headers.get('upload-length')).toBe(String(bytes.length));
    expect(head.headers.get('cache-control')).toBe('no-store');
    const rest = await patch(location, half, bytes.subarray(half));
    expect(rest.status).toBe(204);
    expect(rest.headers.get('upload-offset')).toBe(String(bytes.length));
    const mediaId = rest.headers.get('media-id');
    expect(mediaId).toMatch(/^med_/);
    const state = await call('GET', location);
    expect(state.body).toMatchObject({ offset: bytes.length, length: bytes.length, workspace });
    expect(state.body.media).toMatchObject({
      id: mediaId,
      kind: 'video',
      mime: 'video/mp4',
      width: 540,
      height: 960,
      duration_ms: 4000,
      size: bytes.length,
    });
    const row = await stack.publishing.prisma.media.findUniqueOrThrow({ where: { id: mediaId ?? '' } });
    expect(readFileSync(`${stack.mediaDir}/${row.storageKey}`).equals(bytes)).toBe(true);
    // Its media deleted, the upload is over: not found, never made again.
    expect((await call('DELETE', `/v1/media/${mediaId}`)).status).toBe(204);
    expect((await call('GET', location)).status).toBe(404);
  });

  // Guarantee: a PATCH whose connection breaks halfway keeps the bytes that arrived: HEAD gives
  // that offset, and a PATCH of the rest from there completes the same file.
  it('resumes after a connection broken halfway', async () => {
    const bytes = fixture('landscape-hevc.mov');
    const location = (await create(bytes.length)).headers.get('location') ?? '';
    const half = Math.floor(bytes.length / 2);
    await brokenPatch(location, bytes, half);
    const offset = await eventuallyOffset(location, half);
    expect(offset).toBe(half);
    const rest = await patch(location, offset, bytes.subarray(offset));
    expect(rest.status).toBe(204);
    const { media } = (await call('GET', location)).body;
    expect(media).toMatchObject({ kind: 'video', mime: 'video/quicktime', size: bytes.length });
    expect(media.video).toMatchObject({ video_codec: 'hevc' });
  });

  // Guarantee: a PATCH at another offset than the upload's is 409 (nothing written); one without
  // the octet-stream type is 415; a request without Tus-Resumable is 412; all in the envelope.
  it('refuses PATCHes that do not fit', async () => {
    const bytes = fixture('story-h264.mp4');
    const location = (await create(bytes.length)).headers.get('location') ?? '';
    const wrongOffset = await patch(location, 10, bytes.subarray(10, 20));
    expect(wrongOffset.status).toBe(409);
    expect(await errorOf(wrongOffset)).toMatchObject({ code: 'conflict' });
    expect(await offsetOf(location)).toBe(0);
    const wrongType = await tus(
      location,
      'PATCH',
      { 'content-type': 'application/json', 'upload-offset': '0' },
      Buffer.from('{}'),
    );
    expect(wrongType.status).toBe(415);
    expect(await errorOf(wrongType)).toMatchObject({ code: 'validation_error', field: 'Content-Type' });
    const noVersion = await fetch(`${stack.gateway.url}${location}`, {
      method: 'HEAD',
      headers: { authorization: `Bearer ${key}` },
    });
    expect(noVersion.status).toBe(412);
    expect(noVersion.headers.get('tus-version')).toBeNull();
  });

  // Guarantee: a PATCH while another part of the same upload is being written is 409 (never two
  // writers at one offset); once the claim lapses (a writer that died) the upload takes parts again.
  it('refuses a second writer at once', async () => {
    const bytes = fixture('story-h264.mp4');
    const location = (await create(bytes.length)).headers.get('location') ?? '';
    const id = location.split('/').pop() ?? '';
    const claimed = (until: Date) =>
      stack.publishing.prisma.mediaUpload.update({ where: { id }, data: { writingUntil: until } });
    await claimed(new Date(Date.now() + 60_000));
    const second = await patch(location, 0, bytes.subarray(0, 100));
    expect(second.status).toBe(409);
    expect((await errorOf(second)).message).toContain('being written');
    await claimed(new Date(Date.now() - 1));
    expect((await patch(location, 0, bytes.subarray(0, 100))).status).toBe(204);
    expect(await offsetOf(location)).toBe(100);
  });

  // Guarantee: Upload-Length over the video limit is 413 before any byte; a missing workspace in
  // Upload-Metadata is 400 on that header.
  it('refuses uploads it cannot take', async () => {
    const tooLong = await create(1_000_001);
    expect(tooLong.status).toBe(413);
    expect(await errorOf(tooLong)).toMatchObject({ code: 'validation_error', field: 'Upload-Length' });
    const noWorkspace = await tus('/v1/uploads', 'POST', { 'upload-length': '10' });
    expect(noWorkspace.status).toBe(400);
    expect(await errorOf(noWorkspace)).toMatchObject({ field: 'Upload-Metadata' });
  });

  // Guarantee: a completed upload whose bytes are not a video (nor an image) is refused on
  // `file` by its last PATCH, and the upload and its bytes are gone.
  it('refuses a file that is not a video when it completes', async () => {
    const before = await readdir(stack.mediaDir);
    const bytes = Buffer.from('plain text pretending to be a movie'.repeat(10));
    const location = (await create(bytes.length)).headers.get('location') ?? '';
    const res = await patch(location, 0, bytes);
    expect(res.status).toBe(400);
    expect(await errorOf(res)).toMatchObject({ code: 'validation_error', field: 'file' });
    expect((await tus(location, 'HEAD')).status).toBe(404);
    expect(await readdir(stack.mediaDir)).toEqual(before);
  });

  // Guarantee: DELETE ends an upload (tus termination): its bytes go and it is 404 afterwards.
  it('terminates an upload', async () => {
    const bytes = fixture('story-short.mp4');
    const location = (await create(bytes.length)).headers.get('location') ?? '';
    await patch(location, 0, bytes.subarray(0, 100));
    const uploadId = location.split('/').pop() ?? '';
    expect(await readdir(stack.mediaDir)).toContain(uploadId);
    expect((await tus(location, 'DELETE')).status).toBe(204);
    expect((await tus(location, 'HEAD')).status).toBe(404);
    expect(await readdir(stack.mediaDir)).not.toContain(uploadId);
  });
});

describe('upload scoping', () => {
  // Guarantee: a workspace key cannot start an upload in another workspace (403), nor see or
  // append to another workspace's upload (404); another partner cannot either (404).
  it('keeps uploads in their workspace and partner', async () => {
    const mine = (await call('POST', '/v1/workspaces', { name: 'mine' })).body.id;
    const wsKey = (await call('POST', `/v1/workspaces/${mine}/keys`, { label: 'uploads' })).body.key;
    const forbidden = await create(100, { as: wsKey });
    expect(forbidden.status).toBe(403);
    expect(await errorOf(forbidden)).toMatchObject({ code: 'forbidden' });
    expect((await create(100, { ws: mine, as: wsKey })).status).toBe(201);

    const theirs = (await create(100)).headers.get('location') ?? '';
    const stranger = (await stack.createPartner()).key;
    for (const as of [wsKey, stranger]) {
      expect((await tus(theirs, 'HEAD', {}, undefined, as)).status).toBe(404);
      expect((await patch(theirs, 0, Buffer.alloc(10), as)).status).toBe(404);
      expect((await tus(theirs, 'GET', {}, undefined, as)).status).toBe(404);
      expect((await tus(theirs, 'DELETE', {}, undefined, as)).status).toBe(404);
    }
    expect(await offsetOf(theirs)).toBe(0);
    const strangerCreate = await create(100, { as: stranger });
    expect(strangerCreate.status).toBe(404);
  });
});

/** A PATCH declaring the whole rest but sending only `sent` bytes before the connection drops. */
async function brokenPatch(location: string, bytes: Buffer, sent: number): Promise<void> {
  const { port } = new URL(stack.gateway.url);
  const socket = connect(Number(port), '127.0.0.1');
  await new Promise<void>((resolve) => socket.once('connect', () => resolve()));
  socket.write(
    `PATCH ${location} HTTP/1.1\r\nHost: x\r\nAuthorization: Bearer ${key}\r\nTus-Resumable: 1.0.0\r\n` +
      `Content-Type: application/offset+octet-stream\r\nUpload-Offset: 0\r\nContent-Length: ${bytes.length}\r\n\r\n`,
  );
  socket.write(bytes.subarray(0, sent));
  // Let the bytes arrive before the connection goes.
  await new Promise((resolve) => setTimeout(resolve, 300));
  socket.destroy();
}

/** The upload's offset once it has reached `expected` (the gateway appends what arrived after the break). */
async function eventuallyOffset(location: string, expected: number): Promise<number> {
  const deadline = Date.now() + 5_000;
  let offset = await offsetOf(location);
  while (offset < expected && Date.now() < deadline) {
    await new Promise((resolve) => setTimeout(resolve, 50));
    offset = await offsetOf(location);
  }
  return offset;
}
