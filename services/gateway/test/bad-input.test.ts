import { ERROR_CODES } from '@svc/errors';
import { api } from '@svc/testing';
import { type Stack, startStack } from '@svc/testing/stack';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';

let stack: Stack;
let key: string;
let workspaceId: string;
let sessionToken: string;
/** A workspace key for the MCP cases: its own budget, untouched by the 300 REST cases. */
let workspaceKey: string;

beforeAll(async () => {
  stack = await startStack({ LOG_LEVEL: 'debug' });
  const partner = await stack.createPartner();
  key = partner.key;
  // The widget fuzz sends more than a session's 120 requests a minute.
  await stack.identity.prisma.partner.update({
    where: { id: partner.partnerId },
    data: { embedRateLimitPerMinute: 100_000 },
  });
  workspaceId = (await api(stack.gateway.url, key)('POST', '/v1/workspaces', { name: 'fuzz' })).body.id;
  const session = await api(stack.gateway.url, key)('POST', '/v1/embed-sessions', {
    workspace: workspaceId,
    allowed_origins: ['https://a.example'],
  });
  sessionToken = session.body.token;
  workspaceKey = (
    await api(stack.gateway.url, key)('POST', `/v1/workspaces/${workspaceId}/keys`, { label: 'mcp' })
  ).body.key;
});
afterAll(() => stack.stop());

/** A small seeded generator, so a failing case can be replayed. */
function random(seed: number) {
  let state = seed;
  const next = () => {
    state = (state * 1_103_515_245 + 12_345) % 2 ** 31;
    return state / 2 ** 31;
  };
  return { pick: <T>(items: T[]): T => items[Math.floor(next() * items.length)] as T, next };
}

const PATHS = [
  '/v1/workspaces',
  '/v1/workspaces/WS',
  '/v1/workspaces/WS/keys',
  '/v1/workspaces/WS/keys/key_x',
  '/v1/workspaces/../../etc/passwd',
  '/v1/workspaces/ws_%00',
  '/v1/nowhere',
  '/v1/webhook',
  '/v1/webhook/test',
  '/v1/events',
  '/v1/events/evt_x/deliveries',
  '/v1/events/evt_x/redeliver',
  '/v1/media',
  '/v1/media/med_x',
  '/v1/conversations',
  '/v1/conversations/conv_x',
  '/v1/conversations/conv_x/messages',
  '/v1/messages/msg_x/private-reply',
  '/v1/accounts/acc_x/inbox-sync',
  '/v1/embed-sessions',
  '/v1/embed-sessions/emb_x',
  '/mcp',
  '/v1/mcp',
];
/** The widget's routes, called with an embed session (the stream is left out: it never ends). */
const WIDGET_PATHS = [
  '/v1/embed/session',
  '/v1/embed/accounts',
  '/v1/embed/accounts/acc_x',
  '/v1/embed/connect',
  '/v1/embed/conversations',
  '/v1/embed/conversations/conv_x',
  '/v1/embed/conversations/conv_x/messages',
  '/v1/embed/messages/msg_x/private-reply',
  '/v1/embed/media',
  '/v1/embed/posts',
  '/v1/embed/nowhere',
];
const BODIES = [
  '{bad json',
  '[]',
  '"string"',
  'null',
  '{"name": 5}',
  '{"name": ""}',
  '{"name": "x", "unknown": true}',
  '{"name": "x", "timezone": "Not/AZone"}',
  '{"name": "x", "settings": "nope"}',
  '{"label": {"nested": 1}}',
  `{"name": "${'x'.repeat(5000)}"}`,
  `{"name": "x", "pad": "${'y'.repeat(1_100_000)}"}`,
  '\u0000\u0001\u0002',
];
const QUERIES = [
  '?limit=-1',
  '?limit=abc',
  '?page=0',
  '?limit=9999',
  '?page=1.5',
  '?unknown=1',
  '?limit=',
  '?external_id=',
];
const CONTENT_TYPES = [
  'application/json',
  'text/plain',
  'application/x-www-form-urlencoded',
  'application/json; charset=latin1',
  'multipart/form-data',
];

describe('bad input', () => {
  // Guarantee: no generated bad request gets a 5xx, a stack trace or a non-envelope body.
  it.each([
    ['a partner key', 300, PATHS, () => key],
    ['an embed session', 150, WIDGET_PATHS, () => sessionToken],
  ])(
    'answers generated bad requests with %s with a 4xx in the envelope',
    async (_who, count, paths, token) => {
      const rng = random(20261122);
      for (let i = 0; i < count; i++) {
        const method = rng.pick(['GET', 'POST', 'PATCH', 'DELETE', 'PUT']);
        const path =
          rng.pick(paths).replace('WS', rng.next() < 0.5 ? workspaceId : 'ws_bad') + rng.pick(QUERIES);
        const withBody = method !== 'GET' && method !== 'DELETE';
        const response = await fetch(`${stack.gateway.url}${path}`, {
          method,
          headers: {
            authorization: `Bearer ${token()}`,
            ...(withBody ? { 'content-type': rng.pick(CONTENT_TYPES) } : {}),
          },
          body: withBody ? rng.pick(BODIES) : undefined,
        });
        const text = await response.text();
        const context = `${method} ${path.slice(0, 80)} → ${response.status} ${text.slice(0, 200)}`;
        expect(response.status, context).toBeGreaterThanOrEqual(400);
        expect(response.status, context).toBeLessThan(500);
        const body = JSON.parse(text);
        expect(ERROR_CODES, context).toContain(body.error.code);
        expect(typeof body.error.message, context).toBe('string');
        expect(text, context).not.toMatch(/at .*\.ts:\d+|node_modules/);
      }
    },
  );

  // Guarantee: past authentication, the MCP endpoint answers junk (bad JSON, not JSON-RPC, wrong
  // content types and methods, unknown tools, bad arguments) below 500, without a stack trace:
  // the error envelope, a JSON-RPC error, or a tool result with isError.
  it('answers 100 generated bad MCP requests without a 5xx or a stack trace', async () => {
    const rng = random(20261125);
    const rpc = (method: string, params: unknown) =>
      JSON.stringify({ jsonrpc: '2.0', id: 7, method, params });
    const MCP_BODIES = [
      ...BODIES.slice(0, 6),
      '{"jsonrpc":"1.0","id":1,"method":"tools/list"}',
      '{"jsonrpc":"2.0","method":"tools/call"}',
      rpc('tools/call', { name: 'nope' }),
      rpc('tools/call', { name: 'get_post', arguments: { post_id: 5 } }),
      rpc('tools/call', { name: 'create_post', arguments: 'x' }),
      rpc('tools/call', { name: 'list_posts', arguments: { limit: '9999', extra: [] } }),
      rpc('resources/read', { uri: 'social://posts/../../x' }),
      rpc('no/such/method', {}),
      `[${rpc('tools/list', {})},${rpc('tools/list', {})}]`,
    ];
    const statuses = new Set<number>();
    for (let i = 0; i < 100; i++) {
      const method = rng.pick(['POST', 'POST', 'POST', 'GET', 'DELETE', 'PUT']);
      const withBody = method === 'POST' || method === 'PUT';
      const response = await fetch(`${stack.gateway.url}${rng.pick(['/mcp', '/v1/mcp'])}`, {
        method,
        headers: {
          authorization: `Bearer ${workspaceKey}`,
          accept: rng.pick(['application/json, text/event-stream', 'text/html', '*/*']),
          ...(withBody ? { 'content-type': rng.pick(CONTENT_TYPES.slice(0, 3)) } : {}),
        },
        body: withBody ? rng.pick(MCP_BODIES) : undefined,
      });
      const text = await response.text();
      const context = `${method} → ${response.status} ${text.slice(0, 200)}`;
      expect(response.status, context).toBeLessThan(500);
      expect(text, context).not.toMatch(/at .*\.ts:\d+|node_modules|internal error/);
      statuses.add(response.status);
    }
    // The junk reached MCP itself (JSON-RPC answers, 200 for tool results), not only the checks before it.
    expect(statuses.has(200)).toBe(true);
    expect(statuses.has(429)).toBe(false);
  });

  // Guarantee: the precise code and field for each kind of bad input.
  it('names the field at fault', async () => {
    const raw = (body: string, contentType = 'application/json') =>
      fetch(`${stack.gateway.url}/v1/workspaces`, {
        method: 'POST',
        headers: { authorization: `Bearer ${key}`, 'content-type': contentType },
        body,
      }).then(async (r) => ({
        status: r.status,
        body: (await r.json()) as { error: { code: string; field?: string } },
      }));
    expect((await raw('{bad')).body.error).toMatchObject({ code: 'validation_error', field: 'body' });
    expect((await raw('{"name":"x"}', 'text/plain')).body.error).toMatchObject({
      code: 'validation_error',
      field: 'Content-Type',
    });
    expect((await raw('{"name":5}')).body.error).toMatchObject({ code: 'validation_error', field: 'name' });
    expect((await raw('{"name":"x","extra":1}')).body.error).toMatchObject({
      code: 'validation_error',
      field: 'extra',
    });
    expect((await raw(`{"name":"${'x'.repeat(1_100_000)}"}`)).body.error).toMatchObject({
      code: 'validation_error',
      field: 'body',
    });
    expect((await raw('{}')).body.error).toMatchObject({ code: 'validation_error', field: 'name' });
  });
});

describe('request ids', () => {
  // Guarantee: the caller's sane X-Request-Id comes back and is on every log line of every service that worked on it.
  it('echoes a sane request id and carries it across gRPC', async () => {
    const res = await api(stack.gateway.url, key)('GET', `/v1/workspaces/${workspaceId}`, undefined, {
      'x-request-id': 'partner-trace-123',
    });
    expect(res.headers.get('x-request-id')).toBe('partner-trace-123');
    await new Promise((resolve) => setTimeout(resolve, 100));
    const lines = stack.logs.filter((l) => l.request_id === 'partner-trace-123');
    expect(lines.map((l) => l.service)).toEqual(expect.arrayContaining(['gateway', 'identity']));
  });

  it('replaces an insane one', async () => {
    const res = await api(stack.gateway.url, key)('GET', '/v1/workspaces', undefined, {
      'x-request-id': 'has spaces and {braces}',
    });
    expect(res.headers.get('x-request-id')).toMatch(/^req_[0-9a-f]{32}$/);
  });

  // Guarantee: no log line carries a key or a request body.
  it('never logs keys or bodies', () => {
    const text = JSON.stringify(stack.logs);
    expect(text).not.toContain(key);
    expect(text).not.toContain('"fuzz"');
  });
});

describe('OpenAPI', () => {
  // Guarantee: the document is generated from the routes, so every route is described.
  it('describes every route with its schemas', async () => {
    const doc = (await api(stack.gateway.url)('GET', '/v1/openapi.json')).body;
    expect(doc.openapi).toBe('3.1.0');
    expect(Object.keys(doc.paths).sort()).toEqual([
      '/mcp',
      '/v1/accounts/{id}',
      '/v1/accounts/{id}/inbox-sync',
      '/v1/accounts/{id}/publishing-limit',
      '/v1/accounts/{id}/refresh',
      '/v1/conversations',
      '/v1/conversations/{id}',
      '/v1/conversations/{id}/messages',
      '/v1/embed-sessions',
      '/v1/embed-sessions/{id}',
      '/v1/embed/accounts',
      '/v1/embed/accounts/{id}',
      '/v1/embed/connect',
      '/v1/embed/conversations',
      '/v1/embed/conversations/{id}',
      '/v1/embed/conversations/{id}/messages',
      '/v1/embed/media',
      '/v1/embed/messages/{id}/private-reply',
      '/v1/embed/posts',
      '/v1/embed/session',
      '/v1/embed/stream',
      '/v1/events',
      '/v1/events/{id}/deliveries',
      '/v1/events/{id}/redeliver',
      '/v1/media',
      '/v1/media/{id}',
      '/v1/messages/{id}/private-reply',
      '/v1/posts',
      '/v1/posts/{id}',
      '/v1/posts/{id}/publish',
      '/v1/uploads',
      '/v1/uploads/{id}',
      '/v1/webhook',
      '/v1/webhook/test',
      '/v1/workspaces',
      '/v1/workspaces/{id}',
      '/v1/workspaces/{id}/accounts',
      '/v1/workspaces/{id}/connect-links',
      '/v1/workspaces/{id}/keys',
      '/v1/workspaces/{id}/keys/{key_id}',
    ]);
    const create = doc.paths['/v1/workspaces'].post;
    expect(create.requestBody.content['application/json'].schema.required).toEqual(['name']);
    const upload = doc.paths['/v1/media'].post.requestBody.content;
    expect(Object.keys(upload)).toEqual(['application/json', 'multipart/form-data']);
    expect(upload['multipart/form-data'].schema.properties.file).toMatchObject({
      type: 'string',
      format: 'binary',
    });
    expect(Object.keys(create.responses)).toEqual(expect.arrayContaining(['201', '200', 'default']));
    // The docs page loads the viewer from the gateway itself (rendering: docs-browser.test.ts).
    const docs = await fetch(`${stack.gateway.url}/v1/docs`);
    expect(docs.headers.get('content-type')).toContain('text/html');
    expect(docs.headers.get('content-security-policy')).toContain("script-src 'self'");
    expect(await docs.text()).toContain('<script src="/v1/docs/reference.js">');
  });
});
