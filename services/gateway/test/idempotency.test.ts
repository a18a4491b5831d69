import { createServer, type Server } from 'node:http';
import { api, connectThroughLink, createUser, eventually, Receiver } from '@svc/testing';
import { type Stack, startStack } from '@svc/testing/stack';
import { Redis } from 'ioredis';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { ServiceClients } from '../src/clients.ts';
import { httpRoutes, operationTable } from '../src/operations/table.ts';

/** A 1x1 PNG. */
const PIXEL = Buffer.from(
  'iVBORw0KGgoAAAANSUhEUgAAAAEAAAABCAYAAAAfFcSJAAAADUlEQVR42mNk+M9QDwADhgGAWjR9awAAAABJRU5ErkJggg==',
  'base64',
);

let stack: Stack;
let redis: Redis;
let receiver: Receiver;
let pixelServer: Server;
let pixelUrl: string;
let partnerKey: string;
let call: ReturnType<typeof api>;
let workspace: string;
let account: string;
/** The widget's calls: an embed session of the workspace. */
let widget: ReturnType<typeof api>;

beforeAll(async () => {
  stack = await startStack({ UNAUTHENTICATED_LIMIT_PER_MINUTE: '100000' });
  redis = new Redis('redis://127.0.0.1:6379');
  receiver = await Receiver.start();
  pixelServer = createServer((_req, res) => res.end(PIXEL));
  await new Promise<void>((resolve) => pixelServer.listen(0, '127.0.0.1', resolve));
  pixelUrl = `http://127.0.0.1:${(pixelServer.address() as { port: number }).port}/pixel.png`;
  partnerKey = (await stack.createPartner()).key;
  call = api(stack.gateway.url, partnerKey);
  workspace = (await call('POST', '/v1/workspaces', { name: 'idempotent' })).body.id;
  const user = await createUser(stack, [{ name: 'Idempotent Page' }]);
  const link = (await call('POST', `/v1/workspaces/${workspace}/connect-links`, {})).body;
  await connectThroughLink(stack, link.url, 'page_network', { userId: user.user.id, decision: 'approve' });
  account = (await call('GET', `/v1/workspaces/${workspace}/accounts`)).body.data[0].id;
  await call('PUT', '/v1/webhook', { url: receiver.url });
  const session = await call('POST', '/v1/embed-sessions', {
    workspace,
    allowed_origins: ['https://app.partner.example'],
  });
  widget = api(stack.gateway.url, session.body.token);
});
afterAll(async () => {
  redis.disconnect();
  await stack.stop();
  await receiver.close();
  pixelServer.closeAllConnections();
  await new Promise((resolve) => pixelServer.close(resolve));
});

let keys = 0;
const newKey = () => `retry-${Date.now()}-${++keys}`;

/** An event of the partner that has been delivered (a ping), for the redeliver route. */
async function deliveredEvent(): Promise<string> {
  return (await call('POST', '/v1/webhook/test')).body.event_id;
}

const sandboxSent = async () =>
  (await stack.sandboxControl<{ data: { text: string | null }[] }>('GET', '/__sandbox/sent')).data;

/** A DM from a person to the Page, as the inbox recorded it. */
async function inboundMessage(): Promise<{ conversation: string; message: string }> {
  const { platform_id: pageId } = (await call('GET', `/v1/accounts/${account}`)).body;
  const sent = await stack.sandboxControl<{ message_id: string }>(
    'POST',
    `/__sandbox/pages/${pageId}/messages`,
    {
      from: { name: `Person ${newKey()}` },
      text: 'hello',
    },
  );
  return eventually(async () => {
    const list = (await call('GET', `/v1/conversations?account=${account}&limit=200`)).body.data as {
      id: string;
    }[];
    for (const conversation of list) {
      const messages = (await call('GET', `/v1/conversations/${conversation.id}/messages`)).body.data as {
        id: string;
        platform_message_id: string;
      }[];
      const found = messages.find((m) => m.platform_message_id === sent.message_id);
      if (found) return { conversation: conversation.id, message: found.id };
    }
    return undefined;
  });
}

/** A comment of a person on a post published to the Page, as the inbox recorded it. */
async function inboundComment(): Promise<string> {
  const post = await call('POST', '/v1/posts?wait=true', {
    workspace,
    caption: `commented ${newKey()}`,
    targets: [account],
  });
  const objectId = post.body.targets[0].platform_post_id as string;
  const comment = await stack.sandboxControl<{ id: string }>(
    'POST',
    `/__sandbox/pages/posts/${objectId}/comments`,
    {
      from: { name: 'Commenter' },
      text: 'nice',
    },
  );
  return eventually(async () => {
    const list = (await call('GET', `/v1/conversations?account=${account}&kind=comments&limit=200`)).body
      .data as { id: string }[];
    for (const conversation of list) {
      const messages = (await call('GET', `/v1/conversations/${conversation.id}/messages`)).body.data as {
        id: string;
        platform_message_id: string;
      }[];
      const found = messages.find((m) => m.platform_message_id === comment.id);
      if (found) return found.id;
    }
    return undefined;
  });
}

/**
 * Every POST route: how to call it, and how many of what it makes exist (so a replay can be
 * shown to make nothing twice).
 */
const CASES: Record<
  string,
  {
    path: () => Promise<string>;
    body?: unknown;
    count: (path: string) => Promise<number>;
    /** Called by the widget (its embed session) rather than the partner key. */
    byWidget?: boolean;
  }
> = {
  'POST /v1/workspaces': {
    path: async () => '/v1/workspaces',
    body: { name: 'once' },
    count: async () => (await call('GET', '/v1/workspaces')).body.total,
  },
  'POST /v1/workspaces/:id/keys': {
    path: async () => `/v1/workspaces/${workspace}/keys`,
    body: { label: 'once' },
    count: async () => (await call('GET', `/v1/workspaces/${workspace}/keys`)).body.total,
  },
  'POST /v1/workspaces/:id/connect-links': {
    path: async () => `/v1/workspaces/${workspace}/connect-links`,
    body: {},
    count: async () => await stack.accounts.prisma.connectLink.count({ where: { workspaceId: workspace } }),
  },
  'POST /v1/accounts/:id/refresh': {
    path: async () => `/v1/accounts/${account}/refresh`,
    count: async () => 0,
  },
  'POST /v1/media': {
    path: async () => '/v1/media',
    body: { workspace: ':workspace', url: ':pixel' },
    count: async () => (await call('GET', `/v1/media?workspace=${workspace}`)).body.total,
  },
  'POST /v1/posts': {
    path: async () => '/v1/posts',
    body: { workspace: ':workspace', caption: 'once', targets: [':account'], draft: true },
    count: async () => (await call('GET', `/v1/posts?workspace=${workspace}`)).body.total,
  },
  'POST /v1/posts/:id/publish': {
    path: async () => {
      const draft = await call('POST', '/v1/posts', {
        workspace,
        caption: `publish once ${newKey()}`,
        targets: [account],
        draft: true,
      });
      return `/v1/posts/${draft.body.id}/publish?wait=true`;
    },
    count: async (path) => {
      const post = (await call('GET', path.replace('/publish?wait=true', ''))).body;
      const log = await stack.sandboxControl<{ data: { caption: string }[] }>('GET', '/__sandbox/published');
      return log.data.filter((published) => published.caption === post.caption).length;
    },
  },
  'POST /v1/webhook/test': {
    path: async () => '/v1/webhook/test',
    count: async () => receiver.requests.length,
  },
  'POST /v1/conversations/:id/messages': {
    path: async () => `/v1/conversations/${(await inboundMessage()).conversation}/messages`,
    body: { text: 'sent once' },
    count: async () => (await sandboxSent()).filter((s) => s.text === 'sent once').length,
  },
  'POST /v1/messages/:id/private-reply': {
    path: async () => `/v1/messages/${await inboundComment()}/private-reply`,
    body: { text: 'privately once' },
    count: async () => (await sandboxSent()).filter((s) => s.text === 'privately once').length,
  },
  'POST /v1/accounts/:id/inbox-sync': {
    path: async () => `/v1/accounts/${account}/inbox-sync`,
    count: async () => 0,
  },
  'POST /v1/embed-sessions': {
    path: async () => '/v1/embed-sessions',
    body: { workspace: ':workspace', allowed_origins: ['https://app.partner.example'] },
    count: async () => (await call('GET', `/v1/embed-sessions?workspace=${workspace}`)).body.total,
  },
  'POST /v1/embed/connect': {
    path: async () => '/v1/embed/connect',
    body: { network: 'page_network' },
    count: async () => await stack.accounts.prisma.connectLink.count({ where: { workspaceId: workspace } }),
    byWidget: true,
  },
  'POST /v1/embed/conversations/:id/messages': {
    path: async () => `/v1/embed/conversations/${(await inboundMessage()).conversation}/messages`,
    body: { text: 'sent once from the widget' },
    count: async () => (await sandboxSent()).filter((s) => s.text === 'sent once from the widget').length,
    byWidget: true,
  },
  'POST /v1/embed/messages/:id/private-reply': {
    path: async () => `/v1/embed/messages/${await inboundComment()}/private-reply`,
    body: { text: 'privately once from the widget' },
    count: async () =>
      (await sandboxSent()).filter((s) => s.text === 'privately once from the widget').length,
    byWidget: true,
  },
  'POST /v1/embed/media': {
    path: async () => '/v1/embed/media',
    body: { url: ':pixel' },
    count: async () => (await call('GET', `/v1/media?workspace=${workspace}`)).body.total,
    byWidget: true,
  },
  'POST /v1/embed/posts': {
    path: async () => '/v1/embed/posts',
    body: { caption: 'once from the widget', targets: [':account'], draft: true },
    count: async () => (await call('GET', `/v1/posts?workspace=${workspace}`)).body.total,
    byWidget: true,
  },
  'POST /v1/events/:id/redeliver': {
    path: async () => `/v1/events/${await deliveredEvent()}/redeliver`,
    // The attempts once none is pending: the redelivery's own comes after the answer.
    count: (path) =>
      eventually(async () => {
        const { body } = await call('GET', path.replace('/redeliver', '/deliveries'));
        return body.state === 'pending' ? undefined : (body.total as number);
      }),
  },
};

const fill = (body: unknown) =>
  body === undefined
    ? undefined
    : JSON.parse(
        JSON.stringify(body)
          .replaceAll('":pixel"', `"${pixelUrl}"`)
          .replaceAll('":account"', `"${account}"`)
          .replaceAll('":workspace"', `"${workspace}"`),
      );

/** The Redis records of this stack's gateway. */
async function records(): Promise<string[]> {
  return redis.keys(`${stack.prefix}:idem:*`);
}

/** Routes that create nothing countable: they read the network again. */
const NOTHING_MADE = ['POST /v1/accounts/:id/refresh', 'POST /v1/accounts/:id/inbox-sync'];

describe('Idempotency-Key on every POST', () => {
  const posts = httpRoutes(operationTable({} as ServiceClients)).filter((route) => route.method === 'POST');

  // Guarantee: every POST route is covered below.
  it('covers every POST route', () => {
    expect(posts.map((route) => `${route.method} ${route.url}`).sort()).toEqual(Object.keys(CASES).sort());
  });

  for (const route of posts) {
    const name = `${route.method} ${route.url}`;
    // Guarantee: a retry with the same key and body answers the first answer again (same status and
    // body, Idempotent-Replayed: true) and does nothing twice.
    it(`${name}: a retry answers the first answer and does nothing twice`, async () => {
      const spec = CASES[name];
      if (!spec) throw new Error(`no case for ${name}`);
      const path = await spec.path();
      const headers = { 'idempotency-key': newKey() };
      const before = await spec.count(path);
      const caller = spec.byWidget ? widget : call;
      const first = await caller('POST', path, fill(spec.body), headers);
      expect(first.status, JSON.stringify(first.body)).toBeLessThan(300);
      const made = await spec.count(path);
      const again = await caller('POST', path, fill(spec.body), headers);
      expect(again.status).toBe(first.status);
      expect(again.body).toEqual(first.body);
      expect(again.headers.get('idempotent-replayed')).toBe('true');
      expect(first.headers.get('idempotent-replayed')).toBeNull();
      expect(await spec.count(path)).toBe(made);
      if (!NOTHING_MADE.includes(name)) expect(made).toBeGreaterThan(before);
    });
  }

  // Guarantee: the status recorded and replayed is the one the route chose (200, not 201, for a
  // workspace whose external_id is already known).
  it('replays the status the route chose', async () => {
    const body = { name: 'known', external_id: `known-${newKey()}` };
    expect((await call('POST', '/v1/workspaces', body)).status).toBe(201);
    const headers = { 'idempotency-key': newKey() };
    const first = await call('POST', '/v1/workspaces', body, headers);
    const again = await call('POST', '/v1/workspaces', body, headers);
    expect([first.status, again.status]).toEqual([200, 200]);
    expect(again.headers.get('idempotent-replayed')).toBe('true');
  });

  // Guarantee: another body (or query) under the same key, caller and path is a 409 conflict.
  it('refuses another request under the same key', async () => {
    const headers = { 'idempotency-key': newKey() };
    expect((await call('POST', '/v1/workspaces', { name: 'first' }, headers)).status).toBe(201);
    const other = await call('POST', '/v1/workspaces', { name: 'second' }, headers);
    expect(other.status).toBe(409);
    expect(other.body.error).toMatchObject({ code: 'conflict' });
    const bad = await call('POST', '/v1/workspaces', { name: 'x' }, { 'idempotency-key': 'has space' });
    expect(bad.body.error).toMatchObject({ code: 'validation_error', field: 'Idempotency-Key' });
  });

  // Guarantee: an uploaded file is part of what is compared: the same upload replays, another file
  // under the same key is a conflict, not the first file's record.
  it('compares the uploaded file', async () => {
    const upload = async (bytes: Buffer, key: string) => {
      const form = new FormData();
      form.set('workspace', workspace);
      form.set('file', new Blob([new Uint8Array(bytes)], { type: 'image/png' }), 'pixel.png');
      const response = await fetch(`${stack.gateway.url}/v1/media`, {
        method: 'POST',
        headers: { authorization: `Bearer ${partnerKey}`, 'idempotency-key': key },
        body: form,
      });
      return {
        status: response.status,
        body: (await response.json()) as { id?: string; error?: { code: string } },
        replayed: response.headers.get('idempotent-replayed'),
      };
    };
    const key = newKey();
    const first = await upload(PIXEL, key);
    expect(first.status).toBe(201);
    expect(await upload(PIXEL, key)).toEqual({ ...first, replayed: 'true' });
    const other = Buffer.concat([PIXEL, Buffer.from([0])]);
    expect((await upload(other, key)).body.error?.code).toBe('conflict');
  });

  // Guarantee: a record is the key's, the caller's and the path's: another partner or another path
  // with the same key is a request of its own.
  it('keys records on the key, the caller and the path', async () => {
    const key = newKey();
    const mine = await call('POST', '/v1/workspaces', { name: 'same key' }, { 'idempotency-key': key });
    const other = api(stack.gateway.url, (await stack.createPartner()).key);
    const theirs = await other('POST', '/v1/workspaces', { name: 'same key' }, { 'idempotency-key': key });
    expect(theirs.status).toBe(201);
    expect(theirs.body.id).not.toBe(mine.body.id);
    const link = await call(
      'POST',
      `/v1/workspaces/${mine.body.id}/connect-links`,
      {},
      { 'idempotency-key': key },
    );
    expect(link.status).toBe(201);
  });

  // Guarantee: the replayed answer of POST …/keys holds the plain key, so its record is sealed
  // (the key never sits readable in Redis) and expires with the record's 24 hours.
  it('keeps the minted key sealed, for 24 hours', async () => {
    const before = new Set(await records());
    const headers = { 'idempotency-key': newKey() };
    const minted = await call(
      'POST',
      `/v1/workspaces/${workspace}/keys`,
      { label: 'label-in-the-clear' },
      headers,
    );
    const added = (await records()).filter((record) => !before.has(record));
    expect(added).toHaveLength(1);
    const stored = (await redis.get(added[0] as string)) as string;
    expect(stored).not.toContain(minted.body.key);
    expect(stored).not.toContain(minted.body.key.slice(-20));
    expect(stored).not.toContain('label-in-the-clear');
    const ttlMs = await redis.pttl(added[0] as string);
    expect(ttlMs).toBeGreaterThan(23.9 * 3_600_000);
    expect(ttlMs).toBeLessThanOrEqual(24 * 3_600_000);
    const replay = await call(
      'POST',
      `/v1/workspaces/${workspace}/keys`,
      { label: 'label-in-the-clear' },
      headers,
    );
    expect(replay.body.key).toBe(minted.body.key);
    const listed = JSON.stringify((await call('GET', `/v1/workspaces/${workspace}/keys`)).body);
    expect(listed).not.toContain(minted.body.key);
  });

  // Guarantee: a refusal does nothing and records nothing: the retry with the same key runs once
  // the cause is fixed.
  it('frees the key after a refusal', async () => {
    const headers = { 'idempotency-key': newKey() };
    await call('DELETE', '/v1/webhook');
    const refused = await call('POST', '/v1/webhook/test', undefined, headers);
    expect(refused.status).toBe(409);
    await call('PUT', '/v1/webhook', { url: receiver.url });
    const ran = await call('POST', '/v1/webhook/test', undefined, headers);
    expect(ran.status).toBe(200);
    expect(ran.headers.get('idempotent-replayed')).toBeNull();
  });

  // Guarantee: two requests with one key at once run once: the second is told to retry (409).
  it('runs concurrent requests with one key once', async () => {
    const held: (() => void)[] = [];
    receiver.behaviour = (_request, response) => held.push(() => response.writeHead(200).end());
    try {
      const headers = { 'idempotency-key': newKey() };
      const first = call('POST', '/v1/webhook/test', undefined, headers);
      while (held.length === 0) await new Promise((resolve) => setTimeout(resolve, 10));
      const second = await call('POST', '/v1/webhook/test', undefined, headers);
      expect(second.status).toBe(409);
      expect(second.body.error.message).toContain('in progress');
      held[0]?.();
      expect((await first).status).toBe(200);
      expect(held).toHaveLength(1);
    } finally {
      receiver.behaviour = (_request, response) => response.writeHead(200).end('ok');
    }
  });

  // Guarantee: a post is never created twice under one key, even when the gateway's record is
  // gone (a gateway that died before recording, Redis that lost it): publishing's own claim
  // answers the retry with the same post.
  it('creates one post even when the gateway record is lost', async () => {
    const headers = { 'idempotency-key': newKey() };
    const body = { workspace, caption: 'lost record', targets: [account], draft: true };
    const before = new Set(await records());
    const first = await call('POST', '/v1/posts', body, headers);
    for (const record of (await records()).filter((r) => !before.has(r))) await redis.del(record);
    const again = await call('POST', '/v1/posts', body, headers);
    expect(again.body.id).toBe(first.body.id);
    expect(again.headers.get('idempotent-replayed')).toBe('true');
    const drafts = (await call('GET', `/v1/posts?workspace=${workspace}&limit=200`)).body.data;
    expect(drafts.filter((p: { caption: string }) => p.caption === 'lost record')).toHaveLength(1);
  });

  // Guarantee: the OpenAPI document describes the header on every POST.
  it('documents the header on every POST', async () => {
    const doc = (await api(stack.gateway.url)('GET', '/v1/openapi.json')).body;
    for (const route of posts) {
      const path = route.url.replace(/:([a-z_]+)/g, '{$1}');
      const parameters = (doc.paths[path].post.parameters as { $ref?: string }[]).map((parameter) =>
        parameter.$ref ? doc.components.parameters[parameter.$ref.split('/').at(-1) ?? ''] : parameter,
      );
      expect(parameters, path).toContainEqual(
        expect.objectContaining({ name: 'Idempotency-Key', in: 'header' }),
      );
    }
  });
});
