import { createServer, type Server } from 'node:http';
import { api, connectThroughLink, createUser, eventually } from '@svc/testing';
import { type Stack, startStack } from '@svc/testing/stack';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { ServiceClients } from '../src/clients.ts';
import { httpRoutes, operationTable } from '../src/operations/table.ts';

/**
 * The embed column of spec section 5, transcribed independently of the gateway's table: every
 * `/v1/embed/*` route against partner and workspace keys, a session of the workspace, a session of
 * another workspace (whose objects these are not), a session without the route's surface, an
 * expired and an ended session, and no token. Every other route refuses sessions (403, in
 * permissions.test.ts), and expired and ended sessions everywhere (401, below).
 */
type Caller =
  | 'partner'
  | 'workspaceKey'
  | 'embed'
  | 'embedOther'
  | 'noSurface'
  | 'expired'
  | 'ended'
  | 'none';
type Expected = [number, string?];
type Surface = 'connect' | 'inbox' | 'publish';
const SURFACES: Surface[] = ['connect', 'inbox', 'publish'];

const EXPECTED: Record<string, { surfaces?: Surface[]; own: Expected; other: Expected }> = {
  'GET /v1/embed/session': { own: [200], other: [200] },
  'GET /v1/embed/stream': { own: [200], other: [200] },
  // The publish surface picks its targets from the account list.
  'GET /v1/embed/accounts': { surfaces: ['connect', 'publish'], own: [200], other: [200] },
  'POST /v1/embed/connect': { surfaces: ['connect'], own: [201], other: [201] },
  'GET /v1/embed/conversations': { surfaces: ['inbox'], own: [200], other: [200] },
  'GET /v1/embed/conversations/:id': { surfaces: ['inbox'], own: [200], other: [404, 'not_found'] },
  'PATCH /v1/embed/conversations/:id': { surfaces: ['inbox'], own: [200], other: [404, 'not_found'] },
  'GET /v1/embed/conversations/:id/messages': { surfaces: ['inbox'], own: [200], other: [404, 'not_found'] },
  'POST /v1/embed/conversations/:id/messages': { surfaces: ['inbox'], own: [201], other: [404, 'not_found'] },
  // The fixture's message is a direct message: a private reply answers comments, hence 400 unsupported.
  'POST /v1/embed/messages/:id/private-reply': {
    surfaces: ['inbox'],
    own: [400, 'unsupported'],
    other: [404, 'not_found'],
  },
  'POST /v1/embed/media': { surfaces: ['publish'], own: [201], other: [201] },
  // Another workspace's account as a target does not exist for the session.
  'POST /v1/embed/posts': { surfaces: ['publish'], own: [201], other: [400, 'validation_error'] },
  'GET /v1/embed/posts': { surfaces: ['publish'], own: [200], other: [200] },
  // Last: it disconnects the fixture's account.
  'DELETE /v1/embed/accounts/:id': { surfaces: ['connect'], own: [204], other: [404, 'not_found'] },
};

/** The surfaces a session lacking every one of the route's surfaces is granted. */
const without = (surfaces: Surface[]) => SURFACES.filter((surface) => !surfaces.includes(surface));

const BODIES: Record<string, unknown> = {
  'POST /v1/embed/connect': { network: 'page_network' },
  'PATCH /v1/embed/conversations/:id': { read: true },
  'POST /v1/embed/conversations/:id/messages': { text: 'matrix' },
  'POST /v1/embed/messages/:id/private-reply': { text: 'matrix' },
  'POST /v1/embed/media': { url: ':pixel' },
  'POST /v1/embed/posts': { caption: 'matrix', targets: [':account'], draft: true },
};

const PIXEL = Buffer.from(
  'iVBORw0KGgoAAAANSUhEUgAAAAEAAAABCAYAAAAfFcSJAAAADUlEQVR42mNk+M9QDwADhgGAWjR9awAAAABJRU5ErkJggg==',
  'base64',
);

let stack: Stack;
let pixelServer: Server;
let pixelUrl: string;
let tokens: Record<Caller, string | undefined>;
let noSurface: Record<string, string>;
let ids: { account: string; conversation: string; message: string };

beforeAll(async () => {
  // Every route is tried with ended and expired sessions, far more failed authentications from
  // one address than the throttle allows (it has its own test in tenant-shares.test.ts).
  stack = await startStack({
    UNAUTHENTICATED_LIMIT_PER_MINUTE: '100000',
    AUTH_FAILURES_PER_MINUTE: '100000',
  });
  pixelServer = createServer((_req, res) => res.end(PIXEL));
  await new Promise<void>((resolve) => pixelServer.listen(0, '127.0.0.1', resolve));
  pixelUrl = `http://127.0.0.1:${(pixelServer.address() as { port: number }).port}/pixel.png`;
  const created = await stack.createPartner();
  await stack.identity.prisma.partner.update({
    where: { id: created.partnerId },
    data: { rateLimitPerMinute: 100_000, embedRateLimitPerMinute: 100_000 },
  });
  const partner = api(stack.gateway.url, created.key);
  const own = (await partner('POST', '/v1/workspaces', { name: 'own' })).body.id as string;
  const other = (await partner('POST', '/v1/workspaces', { name: 'other' })).body.id as string;
  const session = async (workspace: string, extra: Record<string, unknown> = {}) =>
    (
      await partner('POST', '/v1/embed-sessions', {
        workspace,
        allowed_origins: ['https://a.example'],
        ...extra,
      })
    ).body as { id: string; token: string };
  const expired = await session(own, { expires_in: 60 });
  await stack.identity.prisma.embedSession.update({
    where: { id: expired.id },
    data: { expiresAt: new Date() },
  });
  const ended = await session(own);
  await partner('DELETE', `/v1/embed-sessions/${ended.id}`);
  tokens = {
    partner: created.key,
    workspaceKey: (await partner('POST', `/v1/workspaces/${own}/keys`, { label: 'own' })).body.key,
    embed: (await session(own)).token,
    embedOther: (await session(other)).token,
    noSurface: undefined,
    expired: expired.token,
    ended: ended.token,
    none: undefined,
  };
  noSurface = {};
  for (const { surfaces } of Object.values(EXPECTED)) {
    if (surfaces) noSurface[surfaces.join()] ??= (await session(own, { surfaces: without(surfaces) })).token;
  }
  ids = await fixtures(partner, own);
});
afterAll(async () => {
  await stack.stop();
  pixelServer.closeAllConnections();
  await new Promise((resolve) => pixelServer.close(resolve));
});

/** A connected account of the workspace and a direct message it received. */
async function fixtures(partner: ReturnType<typeof api>, workspace: string) {
  const user = await createUser(stack, [{ name: 'Embed Matrix Page' }]);
  const link = (await partner('POST', `/v1/workspaces/${workspace}/connect-links`, {})).body;
  await connectThroughLink(stack, link.url, 'page_network', { userId: user.user.id, decision: 'approve' });
  const account = (await partner('GET', `/v1/workspaces/${workspace}/accounts`)).body.data[0];
  await stack.sandboxControl('POST', `/__sandbox/pages/${account.platform_id}/messages`, {
    from: { name: 'Matrix Person' },
    text: 'matrix',
  });
  return eventually(async () => {
    const [conversation] = (await partner('GET', `/v1/conversations?account=${account.id}`)).body.data;
    if (!conversation) return undefined;
    const [message] = (await partner('GET', `/v1/conversations/${conversation.id}/messages`)).body.data;
    return message
      ? {
          account: account.id as string,
          conversation: conversation.id as string,
          message: message.id as string,
        }
      : undefined;
  });
}

function pathOf(url: string): string {
  const id = url.startsWith('/v1/embed/conversations/')
    ? ids.conversation
    : url.startsWith('/v1/embed/messages/')
      ? ids.message
      : ids.account;
  return url.replace(':id', id);
}

const bodyOf = (name: string) =>
  BODIES[name] === undefined
    ? undefined
    : JSON.parse(
        JSON.stringify(BODIES[name])
          .replace('":account"', `"${ids.account}"`)
          .replace('":pixel"', `"${pixelUrl}"`),
      );

/** Calls a route; the stream's success is its headers (the body never ends by itself). */
async function call(method: string, url: string, token: string | undefined, body: unknown) {
  if (url !== '/v1/embed/stream') return api(stack.gateway.url, token)(method, pathOf(url), body);
  const controller = new AbortController();
  const response = await fetch(`${stack.gateway.url}${url}`, {
    headers: token ? { authorization: `Bearer ${token}` } : {},
    signal: controller.signal,
  });
  const type = response.headers.get('content-type') ?? '';
  const parsed = type.includes('json') ? await response.json() : { streamed: type };
  controller.abort();
  return { status: response.status, body: parsed };
}

function expectedFor(name: string, caller: Caller): Expected {
  const row = EXPECTED[name];
  if (!row) throw new Error(`no expectation for ${name}`);
  switch (caller) {
    case 'partner':
    case 'workspaceKey':
      return [403, 'forbidden'];
    case 'embed':
      return row.own;
    case 'embedOther':
      return row.other;
    case 'noSurface':
      return row.surfaces ? [403, 'forbidden'] : row.own;
    default:
      return [401, 'unauthorized'];
  }
}

describe('permission matrix: embed sessions', () => {
  const routes = httpRoutes(operationTable({} as ServiceClients));
  const embedRoutes = routes.filter((r) => r.url.startsWith('/v1/embed/'));
  const ordered = Object.keys(EXPECTED);

  // Guarantee: no widget route exists without a row here.
  it('has an expectation for every /v1/embed route', () => {
    expect(embedRoutes.map((r) => `${r.method} ${r.url}`).sort()).toEqual([...ordered].sort());
  });

  // Guarantee: the exact status and code for each widget route and caller; refusals first, the
  // session's own call last, so a destructive success never disturbs another caller's row.
  for (const name of ordered) {
    const [method, url] = name.split(' ') as [string, string];
    it(name, async () => {
      const callers: Caller[] = [
        'partner',
        'workspaceKey',
        'expired',
        'ended',
        'none',
        'noSurface',
        'embedOther',
        'embed',
      ];
      for (const caller of callers) {
        const surfaces = EXPECTED[name]?.surfaces ?? ['connect'];
        const token = caller === 'noSurface' ? noSurface[surfaces.join()] : tokens[caller];
        const res = await call(method, url, token, bodyOf(name));
        const [status, code] = expectedFor(name, caller);
        expect(res.status, `${name} as ${caller}: ${JSON.stringify(res.body)}`).toBe(status);
        if (code) expect(res.body.error.code, `${name} as ${caller}`).toBe(code);
        if (caller === 'embed' && url === '/v1/embed/stream')
          expect(res.body.streamed).toContain('text/event-stream');
      }
    });
  }

  // Guarantee: an expired or ended session is 401 on every route of the API, not only the widget's.
  it('refuses expired and ended sessions on every route', async () => {
    for (const route of routes) {
      if (route.url === '/v1/embed/stream') continue; // checked above
      for (const caller of ['expired', 'ended'] as const) {
        const res = await api(stack.gateway.url, tokens[caller])(
          route.method,
          route.url.replace(/:[a-z_]+/g, 'x_1'),
        );
        expect(res.status, `${route.method} ${route.url} as ${caller}`).toBe(401);
        expect(res.body.error.code).toBe('unauthorized');
      }
    }
  });
});
