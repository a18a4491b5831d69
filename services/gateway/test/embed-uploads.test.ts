import { readFileSync } from 'node:fs';
import { api, videoFixture } from '@svc/testing';
import { type Stack, startStack } from '@svc/testing/stack';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';

/**
 * The widget's door to resumable uploads (`/v1/embed/uploads`): the same tus implementation as
 * `/v1/uploads`, reached with an embed session that has the publish surface, always in the
 * session's workspace. Sessions never reach another workspace's uploads, keys never use the
 * widget's door and sessions never use the API's.
 */
let stack: Stack;
let key: string;
let call: ReturnType<typeof api>;
let bakery: string;
let florist: string;

const TUS = { 'tus-resumable': '1.0.0' };
const b64 = (text: string) => Buffer.from(text).toString('base64');
const reel = readFileSync(videoFixture('reel-h264-aac.mp4'));

beforeAll(async () => {
  stack = await startStack({ MEDIA_VIDEO_MAX_BYTES: '1000000' });
  key = (await stack.createPartner()).key;
  call = api(stack.gateway.url, key);
  bakery = (await call('POST', '/v1/workspaces', { name: 'Bakery' })).body.id;
  florist = (await call('POST', '/v1/workspaces', { name: 'Florist' })).body.id;
});
afterAll(() => stack.stop());

async function session(workspace: string, surfaces = ['publish']): Promise<string> {
  const minted = await call('POST', '/v1/embed-sessions', {
    workspace,
    allowed_origins: ['https://app.partner.example'],
    surfaces,
  });
  expect(minted.status, JSON.stringify(minted.body)).toBe(201);
  return minted.body.token as string;
}

function tus(path: string, method: string, as: string, headers: Record<string, string> = {}, body?: Buffer) {
  return fetch(`${stack.gateway.url}${path}`, {
    method,
    headers: { authorization: `Bearer ${as}`, ...TUS, ...headers },
    body,
  });
}

function create(path: string, as: string, length: number, metadata: Record<string, string> = {}) {
  const pairs = Object.entries(metadata).map(([k, v]) => `${k} ${b64(v)}`);
  const headers: Record<string, string> = { 'upload-length': String(length) };
  if (pairs.length > 0) headers['upload-metadata'] = pairs.join(',');
  return tus(path, 'POST', as, headers);
}

const patch = (location: string, as: string, offset: number, bytes: Buffer) =>
  tus(
    location,
    'PATCH',
    as,
    { 'content-type': 'application/offset+octet-stream', 'upload-offset': String(offset) },
    bytes,
  );

const errorOf = async (res: Response) =>
  ((await res.json()) as { error: { code: string; field?: string; message: string } }).error;

describe("the widget's uploads", () => {
  // Guarantee: an embed session with the publish surface creates an upload in its own workspace
  // (no workspace named), PATCHes it in two parts with HEAD between, and GET shows the video
  // media it became; it is the API's same upload (the partner key reads it at /v1/uploads).
  it('creates, patches, heads and reads an upload with an embed session', async () => {
    const token = await session(bakery);
    const created = await create('/v1/embed/uploads', token, reel.length, { filename: 'reel.mp4' });
    expect(created.status, await created.clone().text()).toBe(201);
    expect(created.headers.get('tus-resumable')).toBe('1.0.0');
    const location = created.headers.get('location') ?? '';
    expect(location).toMatch(/^\/v1\/embed\/uploads\/upl_[0-9A-Za-z]{25}$/);
    expect(await created.json()).toMatchObject({ workspace: bakery, offset: 0, length: reel.length });

    const half = 16 * 1024;
    const first = await patch(location, token, 0, reel.subarray(0, half));
    expect(first.status).toBe(204);
    expect(first.headers.get('upload-offset')).toBe(String(half));
    const head = await tus(location, 'HEAD', token);
    expect(head.status).toBe(200);
    expect(head.headers.get('upload-offset')).toBe(String(half));
    expect(head.headers.get('upload-length')).toBe(String(reel.length));
    const rest = await patch(location, token, half, reel.subarray(half));
    expect(rest.status).toBe(204);
    const mediaId = rest.headers.get('media-id');
    expect(mediaId).toMatch(/^med_/);

    const read = await tus(location, 'GET', token);
    expect(read.status).toBe(200);
    expect(await read.json()).toMatchObject({
      workspace: bakery,
      offset: reel.length,
      media: { id: mediaId, kind: 'video', mime: 'video/mp4', duration_ms: 4000, workspace: bakery },
    });
    const id = location.split('/').pop();
    const viaApi = await call('GET', `/v1/uploads/${id}`);
    expect(viaApi.body).toMatchObject({ workspace: bakery, media: { id: mediaId } });
  });

  // Guarantee: a session cannot name another workspace in Upload-Metadata (403); naming its own
  // is accepted.
  it('keeps a new upload in the session workspace', async () => {
    const token = await session(bakery);
    const other = await create('/v1/embed/uploads', token, 100, { workspace: florist });
    expect(other.status).toBe(403);
    expect(await errorOf(other)).toMatchObject({ code: 'forbidden' });
    const own = await create('/v1/embed/uploads', token, 100, { workspace: bakery });
    expect(own.status).toBe(201);
  });

  // Guarantee: another workspace's upload, made by a session or by a key, is 404 to a session of
  // this workspace at every method, and its offset is untouched.
  it("cannot reach another workspace's uploads", async () => {
    const floristToken = await session(florist);
    const bySession = (await create('/v1/embed/uploads', floristToken, 100)).headers.get('location') ?? '';
    const byKey =
      (await create('/v1/uploads', key, 100, { workspace: florist })).headers.get('location') ?? '';
    const keyUploadId = byKey.split('/').pop();
    const intruder = await session(bakery);
    for (const location of [bySession, `/v1/embed/uploads/${keyUploadId}`]) {
      expect((await tus(location, 'HEAD', intruder)).status).toBe(404);
      expect((await patch(location, intruder, 0, Buffer.alloc(10))).status).toBe(404);
      expect((await tus(location, 'GET', intruder)).status).toBe(404);
      expect((await tus(location, 'DELETE', intruder)).status).toBe(404);
    }
    expect((await tus(bySession, 'HEAD', floristToken)).headers.get('upload-offset')).toBe('0');
    expect((await call('GET', byKey)).body).toMatchObject({ offset: 0 });
  });

  // Guarantee: each door takes its own callers only: a session at /v1/uploads and a key at
  // /v1/embed/uploads are 403.
  it('keeps keys and sessions at their own doors', async () => {
    const token = await session(bakery);
    const sessionAtApi = await create('/v1/uploads', token, 100, { workspace: bakery });
    expect(sessionAtApi.status).toBe(403);
    const keyAtWidget = await create('/v1/embed/uploads', key, 100, { workspace: bakery });
    expect(keyAtWidget.status).toBe(403);
    expect(await errorOf(keyAtWidget)).toMatchObject({ code: 'forbidden' });
  });

  // Guarantee: a session not granted the publish surface cannot create, read or append (403).
  it('refuses a session without the publish surface', async () => {
    const publisher = await session(bakery);
    const location = (await create('/v1/embed/uploads', publisher, 100)).headers.get('location') ?? '';
    const inbox = await session(bakery, ['inbox']);
    const refused = await create('/v1/embed/uploads', inbox, 100);
    expect(refused.status).toBe(403);
    expect((await errorOf(refused)).message).toContain('publish surface');
    expect((await tus(location, 'HEAD', inbox)).status).toBe(403);
    expect((await patch(location, inbox, 0, Buffer.alloc(10))).status).toBe(403);
    expect((await tus(location, 'GET', inbox)).status).toBe(403);
  });

  // Guarantee: OPTIONS gives a tus client the capabilities at the widget's door too, and, like
  // the rest of /v1/embed (called from the widget's own frame, same origin), no CORS grant: a
  // partner's page cannot upload with the session's token from the browser.
  it('answers its capabilities without a cross-origin grant', async () => {
    const res = await fetch(`${stack.gateway.url}/v1/embed/uploads`, {
      method: 'OPTIONS',
      headers: {
        origin: 'https://app.partner.example',
        'access-control-request-method': 'POST',
        'access-control-request-headers': 'authorization,tus-resumable,upload-length',
      },
    });
    expect(res.status).toBe(204);
    expect(res.headers.get('tus-version')).toBe('1.0.0');
    expect(res.headers.get('tus-max-size')).toBe('1000000');
    expect(res.headers.get('access-control-allow-origin')).toBeNull();
  });
});
