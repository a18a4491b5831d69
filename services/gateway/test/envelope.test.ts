import { connect } from 'node:net';
import { ERROR_CODES, HTTP_STATUS } from '@svc/errors';
import { type Stack, startStack } from '@svc/testing/stack';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';

let stack: Stack;
let key: string;
let port: number;

beforeAll(async () => {
  stack = await startStack();
  key = (await stack.createPartner()).key;
  port = Number(new URL(stack.gateway.url).port);
});
afterAll(() => stack.stop());

interface RawAnswer {
  status: number;
  headers: Record<string, string>;
  body: string;
}

/** Sends bytes as they are (no client fixes them up) and reads the answer until the server closes. */
function raw(request: string): Promise<RawAnswer> {
  return new Promise((resolve, reject) => {
    const chunks: Buffer[] = [];
    const socket = connect(port, '127.0.0.1', () => socket.write(request));
    socket.on('data', (chunk) => chunks.push(chunk));
    socket.on('error', () => {}); // the server may close while we write: what it answered counts
    socket.on('close', () => {
      const text = Buffer.concat(chunks).toString('utf8');
      const [head = '', ...rest] = text.split('\r\n\r\n');
      const [statusLine = '', ...lines] = head.split('\r\n');
      const status = Number(statusLine.split(' ')[1]);
      if (!status) reject(new Error(`no answer to ${request.slice(0, 60)}`));
      const headers = Object.fromEntries(
        lines.map((line) => [
          line.slice(0, line.indexOf(':')).toLowerCase(),
          line.slice(line.indexOf(':') + 1).trim(),
        ]),
      );
      resolve({ status, headers, body: rest.join('\r\n\r\n') });
    });
  });
}

const get = (path: string, headers = '') =>
  `GET ${path} HTTP/1.1\r\nHost: x\r\nAuthorization: Bearer ${key}\r\n${headers}Connection: close\r\n\r\n`;

const post = (path: string, contentType: string, body: string, headers = '') =>
  `POST ${path} HTTP/1.1\r\nHost: x\r\nAuthorization: Bearer ${key}\r\nContent-Type: ${contentType}\r\n` +
  `Content-Length: ${Buffer.byteLength(body)}\r\n${headers}Connection: close\r\n\r\n${body}`;

/** The request, and the code and field (or allowed methods) its refusal must carry. */
const CASES: [name: string, request: () => string, code: string, field?: string][] = [
  ['a path id over the router limit', () => get(`/v1/workspaces/${'a'.repeat(300)}`), 'not_found'],
  ['an unknown route', () => get('/v1/nowhere'), 'not_found'],
  ['a path that is not percent-decodable', () => get('/v1/workspaces/%E0%A4%A'), 'validation_error', 'url'],
  ['bad JSON', () => post('/v1/workspaces', 'application/json', '{bad'), 'validation_error', 'body'],
  ['an empty JSON body', () => post('/v1/workspaces', 'application/json', ''), 'validation_error', 'body'],
  [
    'an unsupported content type',
    () => post('/v1/workspaces', 'application/xml', '<name/>'),
    'validation_error',
    'Content-Type',
  ],
  [
    'a malformed content type',
    () => post('/v1/workspaces', '/;;', '{"name":"x"}'),
    'validation_error',
    'Content-Type',
  ],
  [
    'header overflow',
    () => get('/v1/workspaces', `X-Big: ${'a'.repeat(20_000)}\r\n`),
    'validation_error',
    'headers',
  ],
  [
    'too many headers',
    () => get('/v1/workspaces', Array.from({ length: 3_000 }, (_, i) => `X-H${i}: v\r\n`).join('')),
    'validation_error',
    'headers',
  ],
  [
    'a URL too long',
    () => get(`/v1/workspaces?external_id=${'a'.repeat(20_000)}`),
    'validation_error',
    'url',
  ],
  ['an unknown method', () => get('/v1/workspaces').replace(/^GET/, 'BREW'), 'validation_error', 'method'],
  [
    'OPTIONS on a route',
    () => get('/v1/workspaces').replace(/^GET/, 'OPTIONS'),
    'validation_error',
    'method',
  ],
  [
    'a method the path does not take',
    () => get('/v1/webhook/test').replace(/^GET/, 'DELETE'),
    'validation_error',
    'method',
  ],
  [
    'Content-Length with Transfer-Encoding',
    () => post('/v1/workspaces', 'application/json', '0\r\n\r\n', 'Transfer-Encoding: chunked\r\n'),
    'validation_error',
    'Transfer-Encoding',
  ],
  [
    'a malformed chunk',
    () =>
      'POST /v1/workspaces HTTP/1.1\r\nHost: x\r\nContent-Type: application/json\r\n' +
      'Transfer-Encoding: chunked\r\nConnection: close\r\n\r\nzz\r\n{}\r\n0\r\n\r\n',
    'validation_error',
    'body',
  ],
];

/** The envelope of spec section 7 with a status from its table that matches the code. */
function expectEnvelope(answer: RawAnswer, context: string) {
  expect(answer.status, context).toBeGreaterThanOrEqual(400);
  expect(answer.status, context).toBeLessThan(500);
  expect(answer.headers['content-type'], context).toMatch(/^application\/json/);
  const body = JSON.parse(answer.body);
  expect(Object.keys(body), context).toEqual(['error']);
  expect(ERROR_CODES, context).toContain(body.error.code);
  expect(HTTP_STATUS[body.error.code as keyof typeof HTTP_STATUS], context).toBe(answer.status);
  expect(typeof body.error.message, context).toBe('string');
  return body.error as { code: string; message: string; field?: string };
}

describe("Fastify's and Node's own answers", () => {
  // Guarantee (spec 7): every refusal, including the router's, the body parser's and Node's HTTP
  // parser's, is the envelope { error: { code, message, field? } } with a 4xx from the spec's table.
  for (const [name, request, code, field] of CASES) {
    it(`answers ${name} in the envelope`, async () => {
      const answer = await raw(request());
      const error = expectEnvelope(answer, `${name} → ${answer.status} ${answer.body.slice(0, 200)}`);
      expect(error.code).toBe(code);
      if (field) expect(error.field).toBe(field);
      if (code === 'validation_error') expect(error.field).toBeTruthy();
    });
  }

  // Guarantee: a method a path does not take is told which ones it does (the spec's 400, not a 405).
  it('names the methods a path takes', async () => {
    const options = await raw(get('/v1/workspaces').replace(/^GET/, 'OPTIONS'));
    expect(options.headers.allow).toBe('GET, HEAD, POST');
    expect(JSON.parse(options.body).error.message).toContain('use GET or HEAD or POST');
  });

  // Guarantee: HEAD answers like GET without a body: the same status and the envelope's headers,
  // whether the route takes GET (401 without a key) or not (400 naming the method).
  it('answers HEAD with the status and headers of the envelope', async () => {
    const head = (path: string, auth: boolean) =>
      raw(
        `HEAD ${path} HTTP/1.1\r\nHost: x\r\n${auth ? `Authorization: Bearer ${key}\r\n` : ''}Connection: close\r\n\r\n`,
      );
    const unauthenticated = await head('/v1/workspaces', false);
    const asGet = await raw(get('/v1/workspaces').replace(`Authorization: Bearer ${key}\r\n`, ''));
    expectEnvelope(asGet, 'GET without a key');
    expect(unauthenticated.status).toBe(401);
    expect(unauthenticated.body).toBe('');
    expect(unauthenticated.headers['content-type']).toMatch(/^application\/json/);
    expect(unauthenticated.headers['content-length']).toBe(String(Buffer.byteLength(asGet.body)));
    const postOnly = await head('/v1/webhook/test', true);
    expect(postOnly.status).toBe(400);
    expect(postOnly.headers.allow).toBe('POST');
    expect(postOnly.headers['content-type']).toMatch(/^application\/json/);
  });
});
