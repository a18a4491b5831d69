import { readFileSync } from 'node:fs';
import { readdir } from 'node:fs/promises';
import { createServer, type Server } from 'node:http';
import { parseConfig } from '@svc/config';
import { createPool } from '@svc/db';
import { createLogger } from '@svc/logging';
import { api, type VideoFixture, videoFixture } from '@svc/testing';
import { type Stack, startStack } from '@svc/testing/stack';
import sharp from 'sharp';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { publishingConfigSchema } from '../src/config.ts';
import { SCHEMA } from '../src/db.ts';
import { KnownMediaRows } from '../src/media/known-media.ts';
import { LocalMediaStorage } from '../src/media/local-storage.ts';
import { MediaFiles } from '../src/media/media-files.ts';
import { mediaUrl } from '../src/media/signed-url.ts';
import { MediaUploads } from '../src/media/uploads.ts';

/**
 * Video media end to end through the gateway: MP4 and MOV by upload (multipart, streamed in
 * parts) and by URL, what a file is read from its bytes (never its name or declared type), the
 * video size limit enforced without reading a file whole, and range requests on signed URLs.
 */
const VIDEO_MAX_BYTES = 60_000;
let stack: Stack;
let key: string;
let call: ReturnType<typeof api>;
let workspace: string;
let files: Server;
let filesUrl: string;
/** Bytes the local file server wrote for the endless body, until its client hung up. */
let endlessSent = 0;
let endlessClosed: Promise<void>;

const fixture = (name: VideoFixture) => readFileSync(videoFixture(name));

beforeAll(async () => {
  stack = await startStack({ MEDIA_VIDEO_MAX_BYTES: String(VIDEO_MAX_BYTES) });
  key = (await stack.createPartner()).key;
  call = api(stack.gateway.url, key);
  workspace = (await call('POST', '/v1/workspaces', { name: 'video' })).body.id;
  let closed: () => void = () => {};
  endlessClosed = new Promise((resolve) => {
    closed = resolve;
  });
  files = createServer((req, res) => {
    if (req.url === '/reel.mp4') return res.end(fixture('reel-h264-aac.mp4'));
    if (req.url === '/clip.mov') return res.end(fixture('landscape-hevc.mov'));
    if (req.url === '/endless.mp4') return endless(res, closed);
    res.writeHead(404).end();
  });
  await new Promise<void>((resolve) => files.listen(0, '127.0.0.1', resolve));
  filesUrl = `http://127.0.0.1:${(files.address() as { port: number }).port}`;
});
afterAll(async () => {
  files.closeAllConnections();
  await new Promise((resolve) => files.close(resolve));
  await stack.stop();
});

/** An MP4's first box, then zeros for ever (no Content-Length): only a limit stops a reader. */
function endless(res: import('node:http').ServerResponse, closed: () => void) {
  const head = fixture('reel-h264-aac.mp4').subarray(0, 32);
  const zeros = Buffer.alloc(64 * 1024);
  res.on('close', closed);
  res.writeHead(200, { 'content-type': 'video/mp4' });
  res.write(head);
  const pump = () => {
    while (!res.destroyed && endlessSent < 100 * 1024 * 1024) {
      endlessSent += zeros.length;
      if (!res.write(zeros)) return void res.once('drain', pump);
    }
  };
  pump();
}

async function upload(bytes: Buffer, filename: string, type: string) {
  const form = new FormData();
  form.append('workspace', workspace);
  form.append('file', new Blob([bytes], { type }), filename);
  const response = await fetch(`${stack.gateway.url}/v1/media`, {
    method: 'POST',
    headers: { authorization: `Bearer ${key}` },
    body: form,
  });
  return { status: response.status, body: JSON.parse(await response.text()) };
}

const storedFiles = async () => readdir(stack.mediaDir).catch(() => [] as string[]);

function signedUrl(id: string): string {
  const env = { APP_ENV: 'development', PUBLIC_BASE_URL: stack.gateway.url };
  return mediaUrl(parseConfig(publishingConfigSchema(env), env), id, 'original');
}

describe('video records', () => {
  // Guarantee: an uploaded MP4 becomes a video media item with its real dimensions, duration,
  // size and facts (codecs, frame rate, bit rate, layout) read from its bytes, and no poster.
  it('reads an uploaded MP4', async () => {
    const bytes = fixture('reel-h264-aac.mp4');
    const res = await upload(bytes, 'reel.mp4', 'video/mp4');
    expect(res.status).toBe(201);
    expect(res.body).toEqual({
      id: expect.stringMatching(/^med_/),
      workspace,
      kind: 'video',
      mime: 'video/mp4',
      width: 540,
      height: 960,
      duration_ms: 4000,
      size: bytes.length,
      thumbnail_url: null,
      video: {
        video_codec: 'h264',
        audio_codec: 'aac',
        audio_sample_rate_hz: 44100,
        frame_rate: 30,
        bit_rate: 74370,
        moov_at_front: true,
        has_edit_list: false,
      },
      created: expect.any(String),
    });
    expect((await call('GET', `/v1/media/${res.body.id}`)).body).toEqual(res.body);
    const known = (await stack.publishing.prisma.media.findUniqueOrThrow({ where: { id: res.body.id } }))
      .sha256;
    expect(known).toMatch(/^[0-9a-f]{64}$/);
  });

  // Guarantee: what the post checks see of a media kept when it was made (no read back) is what
  // they would read from its row, for a video and an image.
  it('keeps a new media as its row reads', async () => {
    const video = await upload(fixture('reel-h264-aac.mp4'), 'reel.mp4', 'video/mp4');
    const image = await upload(fixture('not-video.jpg'), 'photo.jpg', 'image/jpeg');
    const pool = createPool(stack.databaseUrl, SCHEMA, 1);
    const fromRows = new KnownMediaRows(pool);
    const kept = new KnownMediaRows(pool);
    try {
      for (const { body } of [video, image]) {
        const row = await stack.publishing.prisma.media.findUniqueOrThrow({ where: { id: body.id } });
        kept.keep(row);
        const [keptMedia, readMedia] = [await kept.read([row.id]), await fromRows.read([row.id])];
        expect(keptMedia.get(row.id)).toEqual(readMedia.get(row.id));
      }
      expect((await fromRows.read([video.body.id])).get(video.body.id)?.video).toMatchObject({
        videoCodec: 'h264',
        frameRate: 30,
      });
    } finally {
      fromRows.close();
      kept.close();
      await pool.end();
    }
  });

  // Guarantee: a QuickTime file is recorded as video/quicktime with its HEVC codec, whatever it is called.
  it('reads a MOV', async () => {
    const res = await upload(fixture('landscape-hevc.mov'), 'clip.bin', 'application/octet-stream');
    expect(res.status).toBe(201);
    expect(res.body).toMatchObject({ kind: 'video', mime: 'video/quicktime', width: 640, height: 360 });
    expect(res.body.video).toMatchObject({ video_codec: 'hevc', frame_rate: 25 });
  });

  // Guarantee: a video fetched by URL is read like an upload; one whose index comes last is
  // read to its end and says so.
  it('reads a video by URL', async () => {
    const res = await call('POST', '/v1/media', { workspace, url: `${filesUrl}/reel.mp4` });
    expect(res.status).toBe(201);
    expect(res.body).toMatchObject({ kind: 'video', mime: 'video/mp4', duration_ms: 4000 });
    const late = await upload(fixture('moov-at-end.mp4'), 'late.mp4', 'video/mp4');
    expect(late.body.video).toMatchObject({ moov_at_front: false });
  });

  // Guarantee (issue 28): bytes that are a JPEG, named as a video, are refused as what they are
  // (nothing kept); the same bytes named as an image are an image, held to the image rules.
  it('refuses a JPEG named .mp4 as the image it is', async () => {
    const before = await storedFiles();
    const jpeg = await sharp({ create: { width: 20, height: 10, channels: 3, background: '#336699' } })
      .jpeg()
      .toBuffer();
    const res = await upload(jpeg, 'movie.mp4', 'video/mp4');
    expect(res.status).toBe(400);
    expect(res.body.error).toMatchObject({ code: 'validation_error', field: 'file' });
    expect(res.body.error.message).toMatch(
      /the file is a JPEG image, not the video its name \(movie\.mp4\) says/,
    );
    expect(await storedFiles()).toEqual(before);
    const named = await upload(jpeg, 'photo.jpg', 'video/mp4');
    expect(named.status).toBe(201);
    expect(named.body).toMatchObject({ kind: 'image', mime: 'image/jpeg', width: 20, height: 10 });
    expect(named.body).toMatchObject({ duration_ms: null, video: null, thumbnail_url: null });
  });

  // Guarantee: bytes that are neither image nor movie, declared as video/mp4, are refused on
  // `file` naming what is accepted; a fragmented MP4 is refused saying why; nothing stays stored.
  it('refuses what is not a readable video', async () => {
    const before = await storedFiles();
    const random = await upload(
      Buffer.from('not a movie at all, only words'.repeat(50)),
      'a.mp4',
      'video/mp4',
    );
    expect(random.status).toBe(400);
    expect(random.body.error).toMatchObject({ code: 'validation_error', field: 'file' });
    expect(random.body.error.message).toContain('not a recognised image or video');
    expect(random.body.error.message).toContain('MP4 and MOV');
    const fragmented = await upload(fixture('fragmented.mp4'), 'rec.mp4', 'video/mp4');
    expect(fragmented.body.error).toMatchObject({ code: 'validation_error', field: 'file' });
    expect(fragmented.body.error.message).toContain('fragmented');
    expect(await storedFiles()).toEqual(before);
    expect(await stack.publishing.prisma.mediaUpload.count({ where: { workspaceId: workspace } })).toBe(0);
  });
});

describe('the video size limit', () => {
  // Guarantee: a video over MEDIA_VIDEO_MAX_BYTES is refused on `file` with the limit, and
  // nothing of it stays stored.
  it('refuses an upload over the limit', async () => {
    const before = await storedFiles();
    const res = await upload(fixture('mpeg4-part2.mp4'), 'big.mp4', 'video/mp4');
    expect(res.status).toBe(400);
    expect(res.body.error).toMatchObject({ code: 'validation_error', field: 'file' });
    expect(res.body.error.message).toContain(`(${VIDEO_MAX_BYTES} bytes)`);
    expect(await storedFiles()).toEqual(before);
  });

  // Guarantee: a URL serving an endless body is refused on `url` once past the limit: the
  // connection is dropped after about the limit, not read to its (absent) end.
  it('stops reading a URL past the limit', async () => {
    const before = await storedFiles();
    const res = await call('POST', '/v1/media', { workspace, url: `${filesUrl}/endless.mp4` });
    expect(res.status).toBe(400);
    expect(res.body.error).toMatchObject({ code: 'validation_error', field: 'url' });
    expect(res.body.error.message).toContain(`(${VIDEO_MAX_BYTES} bytes)`);
    await endlessClosed;
    // The server writes ahead into socket buffers; a few MiB at most, never the 100 MiB.
    expect(endlessSent).toBeLessThan(16 * 1024 * 1024);
    expect(await storedFiles()).toEqual(before);
  });
});

describe('range requests on signed URLs', () => {
  // Guarantee: one range answers 206 with Content-Range and exactly those bytes (a-b, a-, -n);
  // the whole file says Accept-Ranges; several ranges get the whole file; HEAD gives the size.
  it('serves ranges of a video', async () => {
    const bytes = fixture('story-h264.mp4');
    const { id } = (await upload(bytes, 'story.mp4', 'video/mp4')).body;
    const url = signedUrl(id);
    const whole = await fetch(url);
    expect(whole.status).toBe(200);
    expect(whole.headers.get('accept-ranges')).toBe('bytes');
    expect(whole.headers.get('content-type')).toBe('video/mp4');
    expect(Buffer.from(await whole.arrayBuffer()).equals(bytes)).toBe(true);
    const size = bytes.length;
    for (const [range, start, end] of [
      ['bytes=0-99', 0, 99],
      ['bytes=1000-', 1000, size - 1],
      ['bytes=-50', size - 50, size - 1],
      [`bytes=${size - 10}-${size + 500}`, size - 10, size - 1],
    ] as const) {
      const res = await fetch(url, { headers: { range } });
      expect(res.status, range).toBe(206);
      expect(res.headers.get('content-range'), range).toBe(`bytes ${start}-${end}/${size}`);
      expect(res.headers.get('content-length'), range).toBe(String(end - start + 1));
      expect(Buffer.from(await res.arrayBuffer()).equals(bytes.subarray(start, end + 1)), range).toBe(true);
    }
    const several = await fetch(url, { headers: { range: 'bytes=0-1,5-6' } });
    expect(several.status).toBe(200);
    expect((await several.arrayBuffer()).byteLength).toBe(size);
    const head = await fetch(url, { method: 'HEAD' });
    expect(head.status).toBe(200);
    expect(head.headers.get('content-length')).toBe(String(size));
    expect(head.headers.get('accept-ranges')).toBe('bytes');
  });

  // Guarantee: a range past the end is 416 with `Content-Range: bytes */size`, in the envelope.
  it('answers 416 to a range past the end', async () => {
    const bytes = fixture('story-short.mp4');
    const { id } = (await upload(bytes, 'short.mp4', 'video/mp4')).body;
    for (const range of [`bytes=${bytes.length}-`, 'bytes=-0']) {
      const res = await fetch(signedUrl(id), { headers: { range } });
      expect(res.status, range).toBe(416);
      expect(res.headers.get('content-range'), range).toBe(`bytes */${bytes.length}`);
      expect(((await res.json()) as { error: { field: string } }).error).toMatchObject({ field: 'Range' });
    }
  });
});

describe('unfinished uploads', () => {
  /** This stack's uploads as a publishing process sweeps them. */
  function uploads() {
    const env = { APP_ENV: 'development', PUBLIC_BASE_URL: stack.gateway.url };
    const config = parseConfig(publishingConfigSchema(env), env);
    const logger = createLogger('test', { level: 'silent' });
    const files = new MediaFiles(new LocalMediaStorage(stack.mediaDir), config, logger, () => new Date());
    const deps = { files, workspaces: {} as never, config, logger, now: () => new Date() };
    return new MediaUploads(stack.publishing.prisma, stack.publishing.pool, deps);
  }

  // Guarantee: an upload past its expiry is gone for its owner at once (404), and the sweep
  // removes its row and its staged bytes.
  it('expires', async () => {
    const headers = { authorization: `Bearer ${key}`, 'tus-resumable': '1.0.0' };
    const created = await fetch(`${stack.gateway.url}/v1/uploads`, {
      method: 'POST',
      headers: {
        ...headers,
        'upload-length': '100',
        'upload-metadata': `workspace ${Buffer.from(workspace).toString('base64')}`,
      },
    });
    const location = created.headers.get('location') ?? '';
    const id = location.split('/').pop() ?? '';
    const patched = await fetch(`${stack.gateway.url}${location}`, {
      method: 'PATCH',
      headers: { ...headers, 'content-type': 'application/offset+octet-stream', 'upload-offset': '0' },
      body: Buffer.alloc(40),
    });
    expect(patched.status).toBe(204);
    expect(await storedFiles()).toContain(id);
    await stack.publishing.prisma.mediaUpload.update({
      where: { id },
      data: { expiresAt: new Date(Date.now() - 1000) },
    });
    expect((await fetch(`${stack.gateway.url}${location}`, { method: 'HEAD', headers })).status).toBe(404);
    expect(await uploads().sweep()).toBeGreaterThanOrEqual(1);
    expect(await stack.publishing.prisma.mediaUpload.count({ where: { id } })).toBe(0);
    expect(await storedFiles()).not.toContain(id);
  });
});
