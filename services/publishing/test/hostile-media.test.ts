import { randomBytes } from 'node:crypto';
import { createServer, type Server, type ServerResponse } from 'node:http';
import { parseConfig } from '@svc/config';
import { createClient, PublishingService } from '@svc/contracts';
import { api } from '@svc/testing';
import { type Stack, startStack } from '@svc/testing/stack';
import sharp from 'sharp';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { publishingConfigSchema } from '../src/config.ts';
import { mediaUrl } from '../src/media/signed-url.ts';
import { webpBomb } from './image-bomb.ts';

/**
 * Media uploads as an attacker would send them, end to end through the gateway: markup that made
 * the type sniffing backtrack for minutes, decompression bombs, bursts of concurrent uploads,
 * and large files read back through signed URLs (streamed, never held whole).
 */
let stack: Stack;
let key: string;
let workspace: string;
let files: Server;
let filesUrl: string;
/** Requests to the local file server that wait until the test answers them. */
const waiting: ServerResponse[] = [];
let png: Buffer;

beforeAll(async () => {
  stack = await startStack();
  key = (await stack.createPartner()).key;
  workspace = (await api(stack.gateway.url, key)('POST', '/v1/workspaces', { name: 'hostile' })).body.id;
  png = await sharp({ create: { width: 8, height: 8, channels: 3, background: '#0a78c8' } })
    .png()
    .toBuffer();
  files = createServer((req, res) => {
    if (req.url === '/bomb.webp') return void webpBomb(16383, 16383).then((body) => res.end(body));
    if (req.url?.startsWith('/held')) return void waiting.push(res);
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

async function upload(bytes: Buffer, options: { key?: string; workspace?: string } = {}) {
  const form = new FormData();
  form.append('workspace', options.workspace ?? workspace);
  form.append('file', new Blob([bytes]), 'upload.bin');
  const started = performance.now();
  const response = await fetch(`${stack.gateway.url}/v1/media`, {
    method: 'POST',
    headers: { authorization: `Bearer ${options.key ?? key}` },
    body: form,
  });
  const body = JSON.parse(await response.text());
  return { status: response.status, headers: response.headers, body, ms: performance.now() - started };
}

const timedGet = async (path: string) => {
  const started = performance.now();
  const res = await api(stack.gateway.url, key)('GET', path);
  return { status: res.status, ms: performance.now() - started };
};

describe('type sniffing', () => {
  // Guarantee: markup built to make the type sniffing backtrack (runs of empty comments) is
  // refused at once with the 400 on `file`, and the service keeps answering other requests
  // meanwhile; an SVG with comments is still named as one.
  it('refuses backtracking bait quickly while answering others', async () => {
    for (const repetitions of [40, 1_000]) {
      const [refused, other] = await Promise.all([
        upload(Buffer.from('<!---->'.repeat(repetitions))),
        timedGet(`/v1/media?workspace=${workspace}`),
      ]);
      expect(refused.status).toBe(400);
      expect(refused.body.error).toMatchObject({ code: 'validation_error', field: 'file' });
      expect(refused.ms).toBeLessThan(2_000);
      expect(other).toMatchObject({ status: 200 });
      expect(other.ms).toBeLessThan(2_000);
    }
    const svg = await upload(Buffer.from(`<!-- logo -->\n<!---->${'<!-- -->'.repeat(50)}<svg width="4"/>`));
    expect(svg.body.error.message).toContain('the file is an SVG image');
  });
});

describe('decompression bombs', () => {
  // Guarantee: a few bytes of lossless WebP claiming 16383x16383 pixels are refused at upload
  // (on `file`, or on `url` when fetched) with its size and the pixel budget in the message,
  // before any decoding.
  it('refuses an image over the pixel budget', async () => {
    const bomb = await webpBomb(16383, 16383);
    const uploaded = await upload(bomb);
    expect(uploaded.status).toBe(400);
    expect(uploaded.body.error).toMatchObject({ code: 'validation_error', field: 'file' });
    expect(uploaded.body.error.message).toContain('16383x16383 pixels');
    expect(uploaded.body.error.message).toContain('limit of 36 megapixels');
    const fetched = await api(stack.gateway.url, key)('POST', '/v1/media', {
      workspace,
      url: `${filesUrl}/bomb.webp`,
    });
    expect(fetched.status).toBe(400);
    expect(fetched.body.error).toMatchObject({ code: 'validation_error', field: 'url' });
    expect(fetched.body.error.message).toContain('the file at url is a WebP image of 16383x16383 pixels');
  });
});

describe('concurrent uploads', () => {
  // Guarantee: a partner with 4 uploads in progress (the default bound) is refused a 5th with
  // 429 rate_limited, Retry-After and the bound in the message, while another partner's upload
  // passes; the 4 then complete.
  it('bounds the uploads of one partner at once', async () => {
    const call = api(stack.gateway.url, key);
    const slow = [1, 2, 3, 4].map((n) =>
      call('POST', '/v1/media', { workspace, url: `${filesUrl}/held-${n}` }),
    );
    const deadline = Date.now() + 10_000;
    while (waiting.length < 4 && Date.now() < deadline) await new Promise((r) => setTimeout(r, 20));
    expect(waiting).toHaveLength(4);

    const fifth = await upload(png);
    expect(fifth.status).toBe(429);
    expect(fifth.body.error.code).toBe('rate_limited');
    expect(fifth.body.error.message).toContain('at most 4 per partner');
    expect(Number(fifth.headers.get('retry-after'))).toBeGreaterThanOrEqual(1);

    const other = await stack.createPartner();
    const otherCall = api(stack.gateway.url, other.key);
    const theirs = (await otherCall('POST', '/v1/workspaces', { name: 'other' })).body.id;
    expect((await upload(png, { key: other.key, workspace: theirs })).status).toBe(201);

    for (const res of waiting.splice(0)) res.end(png);
    expect((await Promise.all(slow)).map((r) => r.status)).toEqual([201, 201, 201, 201]);
    expect((await upload(png)).status).toBe(201);
  });
});

describe('signed file URLs', () => {
  /** A PNG of random pixels (incompressible): several MiB. */
  const noise = () =>
    sharp(randomBytes(1200 * 1000 * 3), { raw: { width: 1200, height: 1000, channels: 3 } })
      .png({ compressionLevel: 0 })
      .toBuffer();
  const env = () => ({ APP_ENV: 'development', PUBLIC_BASE_URL: stack.gateway.url });

  // Guarantee: ReadWholeMediaFile (the gateway's read of a photo) answers a file of at most
  // max_bytes whole in one message, a larger one with its head alone (length 0, no bytes: the
  // gateway then streams it), and a bad token with NOT_FOUND, as the stream does.
  it('reads a file whole in one answer only up to the size asked', async () => {
    const bytes = await noise();
    const created = await upload(bytes);
    const url = mediaUrl(parseConfig(publishingConfigSchema(env()), env()), created.body.id, 'original');
    const token = url.split('/').pop() as string;
    const publishing = createClient(PublishingService, `127.0.0.1:${stack.publishing.port}`);
    try {
      const size = BigInt(bytes.length);
      const whole = await publishing.readWholeMediaFile({ token, maxBytes: size });
      expect(whole.head).toMatchObject({ mime: 'image/png', size, offset: 0n, length: size });
      expect(Buffer.from(whole.data).equals(bytes)).toBe(true);
      const headOnly = await publishing.readWholeMediaFile({ token, maxBytes: size - 1n });
      expect(headOnly.head).toMatchObject({ mime: 'image/png', size, offset: 0n, length: 0n });
      expect(headOnly.data.length).toBe(0);
      const forged = `${token.slice(0, -4)}AAAA`;
      await expect(publishing.readWholeMediaFile({ token: forged, maxBytes: size })).rejects.toMatchObject({
        code: 'not_found',
      });
    } finally {
      publishing.close();
    }
  });

  // Guarantee: a multi-MiB file reaches its fetcher byte for byte with its Content-Length, and
  // crosses from publishing as a stream: a head (mime, size) and then chunks of at most 64 KiB.
  it('streams a large file in chunks', async () => {
    const bytes = await noise();
    expect(bytes.length).toBeGreaterThan(3 * 1024 * 1024);
    const created = await upload(bytes);
    expect(created.status).toBe(201);
    const url = mediaUrl(parseConfig(publishingConfigSchema(env()), env()), created.body.id, 'original');

    const res = await fetch(url);
    expect(res.status).toBe(200);
    expect(res.headers.get('content-length')).toBe(String(bytes.length));
    expect(res.headers.get('content-type')).toBe('image/png');
    expect(Buffer.from(await res.arrayBuffer()).equals(bytes)).toBe(true);

    const publishing = createClient(PublishingService, `127.0.0.1:${stack.publishing.port}`);
    try {
      const messages = [];
      for await (const message of publishing.readMediaFile({ token: url.split('/').pop() as string }))
        messages.push(message.part);
      const [head, ...chunks] = messages;
      expect(head).toMatchObject({ case: 'head', value: { mime: 'image/png', size: BigInt(bytes.length) } });
      expect(chunks.length).toBeGreaterThanOrEqual(Math.ceil(bytes.length / 65_536));
      const data = chunks.map((part) => (part?.case === 'chunk' ? part.value : new Uint8Array()));
      expect(Math.max(...data.map((chunk) => chunk.length))).toBeLessThanOrEqual(65_536);
      expect(Buffer.concat(data).equals(bytes)).toBe(true);
    } finally {
      publishing.close();
    }

    // A fetcher that hangs up halfway leaves nothing stuck: the next read is whole.
    const aborted = new AbortController();
    const partial = await fetch(url, { signal: aborted.signal });
    await partial.body?.getReader().read();
    aborted.abort();
    const again = await fetch(url);
    expect(Buffer.from(await again.arrayBuffer()).equals(bytes)).toBe(true);
  });
});
