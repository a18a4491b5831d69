import { readFileSync } from 'node:fs';
import { request } from 'node:http';
import { setTimeout as sleep } from 'node:timers/promises';
import { api, videoFixture } from '@svc/testing';
import { type Stack, startStack } from '@svc/testing/stack';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';

/**
 * How long a request may take to arrive: a slow sender is cut at REQUEST_TIMEOUT_MS anywhere but
 * on an upload, where a file may take up to UPLOAD_TIMEOUT_MS (a video as one form, a large tus
 * part on a slow line). Here the first is 1 s and each body trickles in over 2.5 s.
 */
const REQUEST_MS = 1000;
const TRICKLE_MS = 2500;
let stack: Stack;
let key: string;
let workspace: string;

beforeAll(async () => {
  stack = await startStack({ REQUEST_TIMEOUT_MS: String(REQUEST_MS), UPLOAD_TIMEOUT_MS: '20000' });
  key = (await stack.createPartner()).key;
  workspace = (await api(stack.gateway.url, key)('POST', '/v1/workspaces', { name: 'deadlines' })).body.id;
});
afterAll(() => stack.stop());

interface Answer {
  status: number;
  body: string;
  ms: number;
}

/** Sends `body` in ten pieces spread over TRICKLE_MS; resolves with the answer, whenever it comes. */
function trickle(
  method: string,
  path: string,
  headers: Record<string, string>,
  body: Buffer,
): Promise<Answer> {
  const started = performance.now();
  return new Promise((resolve, reject) => {
    const req = request(`${stack.gateway.url}${path}`, {
      method,
      headers: { authorization: `Bearer ${key}`, 'content-length': String(body.length), ...headers },
    });
    req.on('response', (res) => {
      const chunks: Buffer[] = [];
      res.on('data', (chunk: Buffer) => chunks.push(chunk));
      res.on('end', () =>
        resolve({
          status: res.statusCode ?? 0,
          body: Buffer.concat(chunks).toString(),
          ms: performance.now() - started,
        }),
      );
    });
    // A connection the server closes while pieces are still going out is the refusal itself.
    req.on('error', (error) => (req.destroyed ? undefined : reject(error)));
    void (async () => {
      const piece = Math.ceil(body.length / 10);
      for (let at = 0; at < body.length && !req.destroyed; at += piece) {
        req.write(body.subarray(at, at + piece));
        await sleep(TRICKLE_MS / 10);
      }
      if (!req.destroyed) req.end();
    })();
  });
}

/** A multipart form of `workspace` then `file`, as a browser would send it. */
function form(file: Buffer, filename: string): { type: string; body: Buffer } {
  const boundary = 'deadline-test-boundary';
  const head =
    `--${boundary}\r\nContent-Disposition: form-data; name="workspace"\r\n\r\n${workspace}\r\n` +
    `--${boundary}\r\nContent-Disposition: form-data; name="file"; filename="${filename}"\r\n` +
    'Content-Type: video/mp4\r\n\r\n';
  return {
    type: `multipart/form-data; boundary=${boundary}`,
    body: Buffer.concat([Buffer.from(head), file, Buffer.from(`\r\n--${boundary}--\r\n`)]),
  };
}

describe('request deadlines', () => {
  // Guarantee: a JSON body still arriving after REQUEST_TIMEOUT_MS is refused in the envelope
  // (400 on `request`) near that deadline, not held until the upload allowance.
  it('cuts a slow JSON body at the request deadline', async () => {
    const body = Buffer.from(JSON.stringify({ name: 'x'.repeat(2000) }));
    const answer = await trickle('POST', '/v1/workspaces', { 'content-type': 'application/json' }, body);
    expect(answer.status, answer.body).toBe(400);
    expect(JSON.parse(answer.body).error).toMatchObject({ code: 'validation_error', field: 'request' });
    expect(answer.ms).toBeLessThan(TRICKLE_MS);
  });

  // Guarantee: a video sent as one multipart form for longer than REQUEST_TIMEOUT_MS is taken
  // whole and becomes a media item.
  it('takes a slow multipart video upload', async () => {
    const { type, body } = form(readFileSync(videoFixture('story-h264.mp4')), 'story.mp4');
    const answer = await trickle('POST', '/v1/media', { 'content-type': type }, body);
    expect(answer.status, answer.body).toBe(201);
    expect(JSON.parse(answer.body)).toMatchObject({ kind: 'video', mime: 'video/mp4' });
    expect(answer.ms).toBeGreaterThan(REQUEST_MS * 1.5);
  });

  // Guarantee: a tus PATCH arriving for longer than REQUEST_TIMEOUT_MS is taken whole.
  it('takes a slow resumable part', async () => {
    const bytes = readFileSync(videoFixture('story-h264.mp4'));
    const created = await fetch(`${stack.gateway.url}/v1/uploads`, {
      method: 'POST',
      headers: {
        authorization: `Bearer ${key}`,
        'tus-resumable': '1.0.0',
        'upload-length': String(bytes.length),
        'upload-metadata': `workspace ${Buffer.from(workspace).toString('base64')}`,
      },
    });
    expect(created.status).toBe(201);
    const answer = await trickle(
      'PATCH',
      created.headers.get('location') ?? '',
      { 'tus-resumable': '1.0.0', 'content-type': 'application/offset+octet-stream', 'upload-offset': '0' },
      bytes,
    );
    expect(answer.status, answer.body).toBe(204);
    expect(answer.ms).toBeGreaterThan(REQUEST_MS * 1.5);
  });
});
