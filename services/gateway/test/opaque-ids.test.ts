import { newId } from '@svc/ids';
import { api } from '@svc/testing';
import { type Stack, startStack } from '@svc/testing/stack';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { ServiceClients } from '../src/clients.ts';
import { httpRoutes, operationTable } from '../src/operations/table.ts';

let stack: Stack;
let call: ReturnType<typeof api>;
let widget: ReturnType<typeof api>;
let workspace: string;

beforeAll(async () => {
  stack = await startStack();
  const partner = await stack.createPartner();
  // Every route times every shape of id: far more than 300 calls a minute.
  await stack.identity.prisma.partner.update({
    where: { id: partner.partnerId },
    data: { rateLimitPerMinute: 100_000 },
  });
  call = api(stack.gateway.url, partner.key);
  workspace = (await call('POST', '/v1/workspaces', { name: 'opaque' })).body.id;
  const session = await call('POST', '/v1/embed-sessions', {
    workspace,
    allowed_origins: ['https://a.example'],
  });
  await stack.identity.prisma.partner.update({
    where: { id: partner.partnerId },
    data: { embedRateLimitPerMinute: 100_000 },
  });
  widget = api(stack.gateway.url, session.body.token);
});
afterAll(() => stack.stop());

/** What a partner might send as an id: from another environment, mistyped, or plain junk. */
const SHAPES = [
  'ws_doesnotexist0000',
  newId('post'),
  'anything',
  'x',
  '%00',
  '..%2F..%2Fetc%2Fpasswd',
  '%F0%9F%99%82',
  "1'%20OR%20'1'%3D'1",
  'a'.repeat(100),
  'a'.repeat(500),
];

/** A valid body for each route that takes one, so only the id can be wrong. */
const BODIES: Record<string, unknown> = {
  'PATCH /v1/workspaces/:id': { name: 'renamed' },
  'POST /v1/workspaces/:id/keys': { label: 'opaque' },
  'POST /v1/workspaces/:id/connect-links': {},
  'PATCH /v1/posts/:id': { caption: 'renamed' },
  'PATCH /v1/conversations/:id': { read: true },
  'POST /v1/conversations/:id/messages': { text: 'opaque' },
  'POST /v1/messages/:id/private-reply': { text: 'opaque' },
};

const KINDS = {
  workspaces: ['workspace', 'workspace'],
  accounts: ['account', 'account'],
  posts: ['post', 'post'],
  media: ['media', 'media'],
  events: ['event', 'event'],
  keys: ['apiKey', 'API key'],
  conversations: ['conversation', 'conversation'],
  messages: ['message', 'message'],
  'embed-sessions': ['embedSession', 'embed session'],
} as const;

/** The kind of the id a route's path names, and the owning service's wording (`<what> not found`). */
function kindOf(url: string) {
  const noun = url.split('/')[isWidget(url) ? 3 : 2] as keyof typeof KINDS;
  return KINDS[url.includes(':key_id') ? 'keys' : noun];
}

/** The widget's routes (`/v1/embed/*`) are called with an embed session, with the REST bodies. */
const isWidget = (url: string) => url.startsWith('/v1/embed/');

describe('opaque ids', () => {
  const routes = httpRoutes(operationTable({} as ServiceClients)).filter((route) => route.url.includes('/:'));

  // Guarantee (spec 2, ids are opaque): a well-formed request naming an object that does not exist
  // is 404 not_found, whatever the id looks like, on every route with an id in its path.
  it('answers 404 not_found for any id that names nothing, on every route', {
    timeout: 120_000,
  }, async () => {
    expect(routes.length).toBeGreaterThan(10);
    for (const route of routes) {
      const name = `${route.method} ${route.url}`;
      const [kind, what] = kindOf(route.url);
      // A well-formed id of the right kind that does not exist goes to the owning service.
      for (const shape of [newId(kind), ...SHAPES]) {
        // In the key route, the workspace is real and the key id is the wrong one.
        const path = route.url.includes(':key_id')
          ? route.url.replace(':id', workspace).replace(':key_id', shape)
          : route.url.replace(':id', shape);
        const caller = isWidget(route.url) ? widget : call;
        const res = await caller(route.method, path, BODIES[name.replace('/v1/embed/', '/v1/')]);
        const context = `${route.method} ${path.slice(0, 80)} → ${res.status} ${JSON.stringify(res.body)}`;
        expect(res.status, context).toBe(404);
        expect(res.body.error.code, context).toBe('not_found');
        expect(res.body.error.field, context).toBeUndefined();
        if (shape.length <= 100) expect(res.body.error.message, context).toBe(`${what} not found`);
      }
    }
  });

  // Guarantee: a body or query field that must name an id still answers 400 naming that field.
  it('keeps 400 validation_error with the field for ids in bodies and queries', async () => {
    const post = await call('POST', '/v1/posts', {
      workspace: 'nope',
      caption: 'x',
      targets: [newId('account')],
    });
    expect(post.status).toBe(400);
    expect(post.body.error).toMatchObject({ code: 'validation_error', field: 'workspace' });
    const list = await call('GET', '/v1/posts?account=nope');
    expect(list.body.error).toMatchObject({ code: 'validation_error', field: 'account' });
    const events = await call('GET', '/v1/events?workspace=nope');
    expect(events.body.error).toMatchObject({ code: 'validation_error', field: 'workspace' });
  });
});
