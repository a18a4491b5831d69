import { readdir } from 'node:fs/promises';
import { createServer, type Server } from 'node:http';
import { parseConfig } from '@svc/config';
import { newId } from '@svc/ids';
import { createLogger } from '@svc/logging';
import { api, counterSum, eventually } from '@svc/testing';
import { type Stack, startStack } from '@svc/testing/stack';
import sharp from 'sharp';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { publishingConfigSchema } from '../src/config.ts';
import { LocalMediaStorage } from '../src/media/local-storage.ts';
import { MediaFiles } from '../src/media/media-files.ts';
import { startPublishing } from '../src/service.ts';

/**
 * Media end to end through the gateway: uploads (multipart) and fetches by URL, type and
 * dimension detection from the bytes, the size limit, SSRF refusals, records, deletion (and its
 * refusal while a post needs the file), signed file URLs, the JPEG conversion for the photo
 * network, workspace-key scoping and the purge on workspace deletion.
 */
const MAX_BYTES = 256 * 1024;
let stack: Stack;
let key: string;
let call: ReturnType<typeof api>;
let workspace: string;
let images: Record<'jpeg' | 'png' | 'webp' | 'gif' | 'big', Buffer>;
let files: Server;
let filesUrl: string;
const served: Record<string, { status?: number; body?: Buffer; location?: string }> = {};

const canvas = (width: number, height: number, channels: 3 | 4 = 3) =>
  sharp({ create: { width, height, channels, background: { r: 10, g: 120, b: 200, alpha: 0.6 } } });

beforeAll(async () => {
  stack = await startStack({ MEDIA_MAX_BYTES: String(MAX_BYTES) });
  key = (await stack.createPartner()).key;
  call = api(stack.gateway.url, key);
  workspace = (await call('POST', '/v1/workspaces', { name: 'media' })).body.id;
  images = {
    jpeg: await canvas(64, 48).jpeg().toBuffer(),
    png: await canvas(33, 17, 4).png().toBuffer(),
    webp: await canvas(120, 90).webp({ lossless: true }).toBuffer(),
    gif: await canvas(8, 8).gif().toBuffer(),
    // Random pixels do not compress: well over the limit.
    big: await sharp(
      Buffer.from(Array.from({ length: 400 * 400 * 3 }, () => Math.floor(Math.random() * 256))),
      {
        raw: { width: 400, height: 400, channels: 3 },
      },
    )
      .png()
      .toBuffer(),
  };
  // A local file server for media by URL (private addresses are allowed in development).
  files = createServer((req, res) => {
    const entry = served[req.url ?? ''];
    if (!entry) return res.writeHead(404).end('not here');
    if (entry.location) return res.writeHead(entry.status ?? 302, { location: entry.location }).end();
    res.writeHead(entry.status ?? 200, { 'content-type': 'application/octet-stream' }).end(entry.body);
  });
  await new Promise<void>((resolve) => files.listen(0, '127.0.0.1', resolve));
  filesUrl = `http://127.0.0.1:${(files.address() as { port: number }).port}`;
  Object.assign(served, {
    '/photo.png': { body: images.png },
    '/moved': { location: '/photo.png' },
    '/anim.gif': { body: images.gif },
    '/big.png': { body: images.big },
    '/broken': { status: 500, body: Buffer.from('boom') },
  });
});
afterAll(async () => {
  files.closeAllConnections();
  await new Promise((resolve) => files.close(resolve));
  await stack.stop();
});

/** A multipart upload; the filename and part Content-Type are the client's claims, nothing more. */
async function upload(
  bytes: Buffer | null,
  options: {
    workspace?: string;
    filename?: string;
    type?: string;
    key?: string;
    extra?: Record<string, string>;
  } = {},
) {
  const form = new FormData();
  if (options.workspace !== '') form.append('workspace', options.workspace ?? workspace);
  if (bytes)
    form.append(
      'file',
      new Blob([bytes], { type: options.type ?? 'application/octet-stream' }),
      options.filename ?? 'upload.bin',
    );
  for (const [name, value] of Object.entries(options.extra ?? {})) form.append(name, value);
  const response = await fetch(`${stack.gateway.url}/v1/media`, {
    method: 'POST',
    headers: { authorization: `Bearer ${options.key ?? key}` },
    body: form,
  });
  return { status: response.status, body: JSON.parse(await response.text()) };
}

const errorOf = async (res: Response) =>
  ((await res.json()) as { error: { code: string; field?: string } }).error;
const mediaRow = (id: string) => stack.publishing.prisma.media.findUniqueOrThrow({ where: { id } });
const storedFiles = async () => readdir(stack.mediaDir).catch(() => [] as string[]);

/** Files publishing has sent the gateway so far (its ReadWholeMediaFile and ReadMediaFile calls). */
const fileReads = () =>
  counterSum(opsMetrics(stack.publishing.opsPort), 'grpc_server_handled_total', ['MediaFile"', 'code="OK"']);
/** Of those, the files read whole in one call (ReadWholeMediaFile). */
const wholeFileReads = () =>
  counterSum(opsMetrics(stack.publishing.opsPort), 'grpc_server_handled_total', [
    '/ReadWholeMediaFile"',
    'code="OK"',
  ]);

const opsMetrics = (opsPort: number) => `http://127.0.0.1:${opsPort}/metrics`;

/** Signed-URL fetches the gateway answered so far, by how (kept, shared, read, streamed). */
async function fetchesAnswered(): Promise<Record<string, number>> {
  const hows = ['kept', 'shared', 'read', 'streamed'];
  const counts = await Promise.all(
    hows.map((how) =>
      counterSum(opsMetrics(stack.gateway.opsPort), 'media_file_fetches_total', [`answered="${how}"`]),
    ),
  );
  return Object.fromEntries(hows.map((how, i) => [how, counts[i] ?? 0]));
}

/** The media files of this stack's publishing service, as its publish jobs offer them to the networks. */
function mediaFiles(now = () => new Date()) {
  const env = { APP_ENV: 'development', PUBLIC_BASE_URL: stack.gateway.url };
  const config = parseConfig(publishingConfigSchema(env), env);
  const logger = createLogger('test', { level: 'silent' });
  return new MediaFiles(new LocalMediaStorage(stack.mediaDir), config, logger, now);
}

describe('uploads', () => {
  // Guarantee: JPEG, PNG and WebP uploads get their real mime and dimensions, whatever the file name and Content-Type claim.
  it.each([
    ['jpeg', 'image/jpeg', 64, 48, 'holiday.png', 'image/png'],
    ['png', 'image/png', 33, 17, 'logo.jpg', 'image/jpeg'],
    ['webp', 'image/webp', 120, 90, 'notes.txt', 'text/plain'],
  ] as const)('detects a %s upload', async (name, mime, width, height, filename, type) => {
    const res = await upload(images[name], { filename, type });
    expect(res.status).toBe(201);
    expect(res.body).toEqual({
      id: expect.stringMatching(/^med_/),
      workspace,
      kind: 'image',
      mime,
      width,
      height,
      size: images[name].length,
      duration_ms: null,
      thumbnail_url: null,
      video: null,
      created: expect.any(String),
    });
    expect(await storedFiles()).toContain(res.body.id);
  });

  // Guarantee: GIF, SVG and unknown bytes are refused on `file`, naming what they are and what is accepted.
  it.each([
    ['gif', () => images.gif, 'a GIF image'],
    [
      'svg',
      () => Buffer.from('<svg xmlns="http://www.w3.org/2000/svg" width="4" height="4"/>'),
      'an SVG image',
    ],
    ['garbage', () => Buffer.from('just some bytes, named like a picture'), 'not a recognised image'],
  ])('refuses %s', async (_name, bytes, words) => {
    const res = await upload(bytes(), { filename: 'photo.jpg', type: 'image/jpeg' });
    expect(res.status).toBe(400);
    expect(res.body.error).toMatchObject({ code: 'validation_error', field: 'file' });
    expect(res.body.error.message).toContain(words);
    expect(res.body.error.message).toContain('JPEG, PNG and WebP');
  });

  // Guarantee: a file over MEDIA_MAX_BYTES is refused on `file` with the limit in the message, and nothing is stored.
  it('refuses a file over the size limit', async () => {
    const before = await storedFiles();
    const res = await upload(images.big, { filename: 'big.png' });
    expect(res.status).toBe(400);
    expect(res.body.error).toMatchObject({ code: 'validation_error', field: 'file' });
    expect(res.body.error.message).toContain('256 KiB (262144 bytes)');
    expect(await storedFiles()).toEqual(before);
  });

  // Guarantee: a missing file, a missing or bad workspace and unknown form fields are 400s naming the field.
  it('names the field at fault in a bad form', async () => {
    expect((await upload(null)).body.error).toMatchObject({ code: 'validation_error', field: 'file' });
    expect((await upload(images.png, { workspace: '' })).body.error).toMatchObject({ field: 'workspace' });
    expect((await upload(images.png, { workspace: 'ws_nope' })).body.error).toMatchObject({
      field: 'workspace',
    });
    expect((await upload(images.png, { extra: { caption: 'x' } })).body.error).toMatchObject({
      field: 'caption',
    });
    const noUrl = await call('POST', '/v1/media', { workspace });
    expect(noUrl.body.error).toMatchObject({ code: 'validation_error', field: 'url' });
  });

  // Guarantee: a garbled multipart body is a 400, never a 5xx.
  it('refuses a malformed multipart body', async () => {
    const res = await fetch(`${stack.gateway.url}/v1/media`, {
      method: 'POST',
      headers: { authorization: `Bearer ${key}`, 'content-type': 'multipart/form-data; boundary=xyz' },
      body: '--xyz\r\nContent-Disposition: form-data; name="file"; filename="a"\r\n\r\nabc',
    });
    expect(res.status).toBe(400);
    expect((await errorOf(res)).code).toBe('validation_error');
  });

  // Guarantee: multipart is accepted by the upload route only; the rest of the API stays JSON-only.
  it('keeps other routes JSON-only', async () => {
    const form = new FormData();
    form.append('name', 'sneaky');
    const res = await fetch(`${stack.gateway.url}/v1/workspaces`, {
      method: 'POST',
      headers: { authorization: `Bearer ${key}` },
      body: form,
    });
    expect(res.status).toBe(400);
    expect(await errorOf(res)).toMatchObject({ code: 'validation_error', field: 'Content-Type' });
  });
});

describe('media by URL', () => {
  // Guarantee: a URL (even through a redirect) is fetched and detected like an upload.
  it('fetches and detects', async () => {
    for (const path of ['/photo.png', '/moved']) {
      const res = await call('POST', '/v1/media', { workspace, url: `${filesUrl}${path}` });
      expect(res.status).toBe(201);
      expect(res.body).toMatchObject({
        workspace,
        mime: 'image/png',
        width: 33,
        height: 17,
        size: images.png.length,
      });
    }
  });

  // Guarantee: fetch failures are 502 network_error with the host and the status or reason in details.
  it('reports fetch failures as network errors', async () => {
    const host = new URL(filesUrl).host;
    const missing = await call('POST', '/v1/media', { workspace, url: `${filesUrl}/nothing.png` });
    expect(missing.status).toBe(502);
    expect(missing.body.error).toMatchObject({
      code: 'network_error',
      details: { host, status: 404, reason: 'HTTP 404' },
    });
    const broken = await call('POST', '/v1/media', { workspace, url: `${filesUrl}/broken` });
    expect(broken.body.error).toMatchObject({ code: 'network_error', details: { host, status: 500 } });
    const refused = await call('POST', '/v1/media', { workspace, url: 'http://127.0.0.1:1/x.png' });
    expect(refused.status).toBe(502);
    expect(refused.body.error).toMatchObject({
      code: 'network_error',
      details: { host: '127.0.0.1:1', reason: 'connection refused' },
    });
  });

  // Guarantee: what the URL serves goes through the same type and size rules, reported on `url`.
  it('applies the type and size rules on url', async () => {
    const gif = await call('POST', '/v1/media', { workspace, url: `${filesUrl}/anim.gif` });
    expect(gif.status).toBe(400);
    expect(gif.body.error).toMatchObject({ code: 'validation_error', field: 'url' });
    expect(gif.body.error.message).toContain('GIF');
    const big = await call('POST', '/v1/media', { workspace, url: `${filesUrl}/big.png` });
    expect(big.body.error).toMatchObject({ code: 'validation_error', field: 'url' });
    expect(big.body.error.message).toContain('262144 bytes');
    const ftp = await call('POST', '/v1/media', { workspace, url: 'ftp://example.com/a.png' });
    expect(ftp.body.error).toMatchObject({ code: 'validation_error', field: 'url' });
  });

  // Guarantee: with ALLOW_PRIVATE_NETWORKS=false (production rules) loopback and private targets are refused on `url`, by literal or by name, directly or through a redirect.
  it('refuses private addresses outside development', async () => {
    // A second publishing instance with production's network rule, behind a second gateway;
    // same database, so the records are shared.
    const env = {
      APP_ENV: 'development',
      DATABASE_URL: stack.databaseUrl,
      NATS_PREFIX: stack.prefix,
      PUBLISHING_GRPC_ADDRESS: '127.0.0.1:0',
      IDENTITY_GRPC_URL: `127.0.0.1:${stack.identity.port}`,
      ACCOUNTS_GRPC_URL: `127.0.0.1:${stack.accounts.port}`,
      OPS_PORT: '0',
      MEDIA_DIR: stack.mediaDir,
      ALLOW_PRIVATE_NETWORKS: 'false',
      LOG_LEVEL: 'error',
    };
    const strict = await startPublishing(
      parseConfig(publishingConfigSchema(env), env),
      createLogger('publishing-strict', { level: 'error' }),
    );
    try {
      const gateway = await stack.startGateway({ PUBLISHING_GRPC_URL: `127.0.0.1:${strict.port}` });
      const strictCall = api(gateway.url, key);
      const port = new URL(filesUrl).port;
      for (const url of [
        `${filesUrl}/photo.png`,
        `http://localhost:${port}/photo.png`,
        'http://169.254.169.254/latest/meta-data/',
        'http://10.0.0.1/x.png',
        'http://[::ffff:127.0.0.1]/x.png',
        'http://[::ffff:0:7f00:1]/x.png',
        'http://[64:ff9b:1::a9fe:a9fe]/x.png',
      ]) {
        const res = await strictCall('POST', '/v1/media', { workspace, url });
        expect(res.status, url).toBe(400);
        expect(res.body.error, url).toMatchObject({ code: 'validation_error', field: 'url' });
        expect(res.body.error.message, url).toContain('an address that is not allowed');
        expect(res.body.error.message, url).not.toMatch(/127\.0\.0\.1|loopback|private/);
      }
    } finally {
      await strict.stop();
    }
  });
});

describe('records', () => {
  // Guarantee: GET returns the record as created; the list pages the workspace's media with a total.
  it('reads and lists', async () => {
    const other = (await call('POST', '/v1/workspaces', { name: 'listing' })).body.id;
    const created = [];
    for (const name of ['jpeg', 'png', 'webp'] as const)
      created.push((await upload(images[name], { workspace: other })).body);
    expect((await call('GET', `/v1/media/${created[1].id}`)).body).toEqual(created[1]);
    const page1 = await call('GET', `/v1/media?workspace=${other}&limit=2`);
    expect(page1.body).toMatchObject({ page: 1, limit: 2, total: 3 });
    expect(page1.body.data).toEqual(created.slice(0, 2));
    const page2 = await call('GET', `/v1/media?workspace=${other}&limit=2&page=2`);
    expect(page2.body.data).toEqual(created.slice(2));
    expect((await call('GET', '/v1/media')).body.error).toMatchObject({
      code: 'validation_error',
      field: 'workspace',
    });
    expect((await call('GET', `/v1/media/${newId('media')}`)).status).toBe(404);
  });

  // Guarantee: DELETE answers 204, removes the file from disk (variants too) and the record.
  it('deletes the record and the file', async () => {
    const { id } = (await upload(images.png)).body;
    await mediaFiles().publishableUrl(await mediaRow(id), 'photo_network');
    expect((await storedFiles()).filter((f) => f.startsWith(id)).sort()).toEqual([id, `${id}.jpeg`]);
    const res = await call('DELETE', `/v1/media/${id}`);
    expect(res.status).toBe(204);
    expect((await storedFiles()).filter((f) => f.startsWith(id))).toEqual([]);
    expect((await call('GET', `/v1/media/${id}`)).status).toBe(404);
    expect((await call('DELETE', `/v1/media/${id}`)).status).toBe(404);
  });

  // Guarantee: media used by a post that is not published yet cannot be deleted (409); once published it can.
  it('refuses to delete media a pending post uses', async () => {
    const { id } = (await upload(images.jpeg)).body;
    const partnerId = (await mediaRow(id)).partnerId;
    const post = await stack.publishing.prisma.post.create({
      data: {
        id: newId('post'),
        partnerId,
        workspaceId: workspace,
        caption: 'hi',
        mediaIds: [id],
        status: 'failed',
        createdBy: 'api',
      },
    });
    const refused = await call('DELETE', `/v1/media/${id}`);
    expect(refused.status).toBe(409);
    expect(refused.body.error.code).toBe('conflict');
    expect(refused.body.error.message).toContain(post.id);
    expect(await storedFiles()).toContain(id);
    await stack.publishing.prisma.post.update({ where: { id: post.id }, data: { status: 'published' } });
    expect((await call('DELETE', `/v1/media/${id}`)).status).toBe(204);
  });
});

describe('signed file URLs', () => {
  // Guarantee: the signed URL serves the exact bytes with the mime, a private bounded cache and nosniff, without an API key.
  it('serves the original bytes', async () => {
    const { id } = (await upload(images.webp)).body;
    const url = await mediaFiles().publishableUrl(await mediaRow(id), 'page_network');
    expect(url.startsWith(`${stack.gateway.url}/media-files/`)).toBe(true);
    const res = await fetch(url);
    expect(res.status).toBe(200);
    expect(res.headers.get('content-type')).toBe('image/webp');
    expect(res.headers.get('x-content-type-options')).toBe('nosniff');
    expect(res.headers.get('cache-control')).toMatch(/^private, max-age=(3[0-5]\d\d|3600)$/);
    expect(Buffer.from(await res.arrayBuffer()).equals(images.webp)).toBe(true);
  });

  // Guarantee: fetches of one signed URL that arrive together (the networks of one post) are
  // answered from one read of the file, each with its exact bytes and headers; the gateway keeps
  // the file for a few seconds (MEDIA_FILE_KEEP_SECONDS), so a fetch just after them reads nothing;
  // its /metrics counts each fetch by how it was answered. A photo's read is one unary call, not a stream.
  it('reads a file once for the fetches of its URL that arrive together', async () => {
    const { id } = (await upload(images.webp)).body;
    const url = await mediaFiles().publishableUrl(await mediaRow(id), 'page_network');
    const before = await fileReads();
    const wholeBefore = await wholeFileReads();
    const answeredBefore = await fetchesAnswered();
    const answers = await Promise.all(
      Array.from({ length: 16 }, async () => {
        const res = await fetch(url);
        return { res, body: Buffer.from(await res.arrayBuffer()) };
      }),
    );
    for (const { res, body } of answers) {
      expect(res.status).toBe(200);
      expect(res.headers.get('content-type')).toBe('image/webp');
      expect(res.headers.get('content-length')).toBe(String(images.webp.length));
      expect(body.equals(images.webp)).toBe(true);
    }
    const reads = (await fileReads()) - before;
    expect(reads).toBeGreaterThanOrEqual(1);
    expect((await wholeFileReads()) - wholeBefore).toBe(reads);
    expect(reads).toBeLessThan(answers.length);
    const after = await fetch(url);
    expect(Buffer.from(await after.arrayBuffer()).equals(images.webp)).toBe(true);
    expect(await fileReads()).toBe(before + reads);
    const answered = await fetchesAnswered();
    const delta = (how: string) => (answered[how] ?? 0) - (answeredBefore[how] ?? 0);
    expect(delta('read')).toBe(reads);
    expect(delta('streamed')).toBe(0);
    expect(delta('kept')).toBeGreaterThanOrEqual(1);
    expect(delta('kept') + delta('shared')).toBe(answers.length + 1 - reads);
  });

  // Guarantee: a PNG for the photo network is served as a JPEG of the same dimensions; the page network gets the PNG.
  it('converts PNG to JPEG for the photo network', async () => {
    const { id } = (await upload(images.png)).body;
    const row = await mediaRow(id);
    const res = await fetch(await mediaFiles().publishableUrl(row, 'photo_network'));
    expect(res.headers.get('content-type')).toBe('image/jpeg');
    const jpeg = Buffer.from(await res.arrayBuffer());
    expect(await sharp(jpeg).metadata()).toMatchObject({ format: 'jpeg', width: 33, height: 17 });
    const original = await fetch(await mediaFiles().publishableUrl(row, 'page_network'));
    expect(Buffer.from(await original.arrayBuffer()).equals(images.png)).toBe(true);
  });

  // Guarantee: a photo stored as landscape pixels with an EXIF orientation that turns it a quarter
  // (what phones write for portrait shots) is recorded with the dimensions it is shown with, and
  // its JPEG for the photo network has those dimensions in its pixels, with no orientation left.
  it('keeps the orientation of a rotated photo', async () => {
    const jpeg = await canvas(64, 48).jpeg().withMetadata({ orientation: 6 }).toBuffer();
    expect((await upload(jpeg)).body).toMatchObject({ mime: 'image/jpeg', width: 48, height: 64 });
    const webp = await canvas(120, 90).webp().withMetadata({ orientation: 8 }).toBuffer();
    const { body } = await upload(webp);
    expect(body).toMatchObject({ mime: 'image/webp', width: 90, height: 120 });
    const res = await fetch(await mediaFiles().publishableUrl(await mediaRow(body.id), 'photo_network'));
    const converted = await sharp(Buffer.from(await res.arrayBuffer())).metadata();
    expect(converted).toMatchObject({ format: 'jpeg', width: 90, height: 120 });
    expect(converted.orientation ?? 1).toBe(1);
  });

  // Guarantee: forged, altered, expired and dangling tokens are all 404 in the error envelope; the
  // URL of a deleted media stops working as soon as its deletion is announced, well before the
  // file kept by the gateway after its last fetch would be dropped by age (10 s).
  it('refuses bad tokens', async () => {
    const { id } = (await upload(images.jpeg)).body;
    const row = await mediaRow(id);
    const good = await mediaFiles().publishableUrl(row, 'page_network');
    const token = good.split('/').pop() as string;
    const past = new Date(Date.now() - 2 * 3600_000);
    const expired = await mediaFiles(() => past).publishableUrl(row, 'page_network');
    const forged = `${id}.original.${token.split('.')[2]}.${'A'.repeat(43)}`;
    for (const url of [
      expired,
      `${stack.gateway.url}/media-files/${forged}`,
      `${stack.gateway.url}/media-files/${token.replace(id, newId('media'))}`,
      `${stack.gateway.url}/media-files/nonsense`,
      `${stack.gateway.url}/media-files/${'x.'.repeat(49)}`,
    ]) {
      const res = await fetch(url);
      expect(res.status, url).toBe(404);
      expect((await errorOf(res)).code).toBe('not_found');
    }
    expect((await fetch(good)).status).toBe(200);
    await call('DELETE', `/v1/media/${id}`);
    await eventually(async () => ((await fetch(good)).status === 404 ? true : undefined), 5_000);
  });
});

describe('scoping', () => {
  // Guarantee: a workspace key reaches its own media only: other workspaces' media are 404, naming another workspace is 403.
  it('keeps a workspace key inside its workspace', async () => {
    const mine = (await call('POST', '/v1/workspaces', { name: 'mine' })).body.id;
    const wsKey = (await call('POST', `/v1/workspaces/${mine}/keys`, { label: 'media' })).body.key;
    const asWorkspace = api(stack.gateway.url, wsKey);
    const theirs = (await upload(images.jpeg)).body.id;
    const own = await upload(images.png, { workspace: mine, key: wsKey });
    expect(own.status).toBe(201);
    expect((await asWorkspace('GET', `/v1/media/${own.body.id}`)).status).toBe(200);
    expect((await asWorkspace('GET', `/v1/media?workspace=${mine}`)).body.total).toBe(1);
    expect((await asWorkspace('GET', `/v1/media/${theirs}`)).body.error.code).toBe('not_found');
    expect((await asWorkspace('DELETE', `/v1/media/${theirs}`)).body.error.code).toBe('not_found');
    expect((await asWorkspace('GET', `/v1/media?workspace=${workspace}`)).body.error.code).toBe('forbidden');
    expect((await upload(images.png, { key: wsKey })).body.error.code).toBe('forbidden');
    expect((await asWorkspace('POST', '/v1/media', { workspace, url: `${filesUrl}/photo.png` })).status).toBe(
      403,
    );
    expect((await call('GET', `/v1/media/${theirs}`)).status).toBe(200);
  });

  // Guarantee: another partner sees none of this partner's media (404), and cannot upload into its workspace.
  it('hides media from other partners', async () => {
    const stranger = api(stack.gateway.url, (await stack.createPartner()).key);
    const { id } = (await upload(images.jpeg)).body;
    expect((await stranger('GET', `/v1/media/${id}`)).status).toBe(404);
    expect((await stranger('POST', '/v1/media', { workspace, url: `${filesUrl}/photo.png` })).status).toBe(
      404,
    );
    expect((await stranger('GET', `/v1/media?workspace=${workspace}`)).status).toBe(404);
  });
});

describe('workspace deletion', () => {
  // Guarantee: deleting a workspace removes its media records and files, and its signed URLs stop
  // working once they are gone (the gateway drops the copy it keeps of a file just fetched).
  it('purges media of a deleted workspace', async () => {
    const doomed = (await call('POST', '/v1/workspaces', { name: 'doomed' })).body.id;
    const ids = [
      (await upload(images.png, { workspace: doomed })).body.id,
      (await upload(images.jpeg, { workspace: doomed })).body.id,
    ];
    const url = await mediaFiles().publishableUrl(await mediaRow(ids[1] ?? ''), 'page_network');
    expect((await fetch(url)).status).toBe(200);
    expect((await call('DELETE', `/v1/workspaces/${doomed}`)).status).toBe(204);
    const deadline = Date.now() + 15_000;
    while (Date.now() < deadline) {
      const left = await stack.publishing.prisma.media.count({ where: { workspaceId: doomed } });
      if (left === 0) break;
      await new Promise((resolve) => setTimeout(resolve, 100));
    }
    expect(await stack.publishing.prisma.media.count({ where: { workspaceId: doomed } })).toBe(0);
    const remaining = await storedFiles();
    for (const id of ids) expect(remaining).not.toContain(id);
    await eventually(async () => ((await fetch(url)).status === 404 ? true : undefined), 5_000);
  });
});
