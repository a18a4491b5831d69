import { AuthCache } from '@svc/auth-cache';
import { api, consent, createUser, eventually, open, Receiver } from '@svc/testing';
import { type Stack, startStack } from '@svc/testing/stack';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { openStream } from './embed-stream-reader.ts';

let stack: Stack;
let receiver: Receiver;
let partnerId: string;
let partner: ReturnType<typeof api>;
let workspace: string;
let account: { id: string; platform_id: string };

const ORIGINS = ['https://app.partner.example'];

async function mint(body: Record<string, unknown> = {}) {
  const res = await partner('POST', '/v1/embed-sessions', { workspace, allowed_origins: ORIGINS, ...body });
  if (res.status !== 201) throw new Error(`mint: ${res.status} ${JSON.stringify(res.body)}`);
  return res.body as { id: string; token: string };
}

/** Consent at the sandbox for the popup URL the widget got, as the user's browser would. */
async function consentInPopup(url: string, userId: string) {
  const started = await open(url);
  expect(started.status).toBe(302);
  return open(await consent(stack, new URL(started.location), { userId, decision: 'approve' }));
}

beforeAll(async () => {
  stack = await startStack({ UNAUTHENTICATED_LIMIT_PER_MINUTE: '100000' });
  receiver = await Receiver.start();
  const created = await stack.createPartner();
  partnerId = created.partnerId;
  partner = api(stack.gateway.url, created.key);
  await partner('PUT', '/v1/webhook', { url: receiver.url });
  workspace = (await partner('POST', '/v1/workspaces', { name: 'Widget Bakery' })).body.id;
  // The first account is connected through the widget's own connect call.
  const user = await createUser(stack, [{ name: 'Widget Page' }]);
  const widget = api(stack.gateway.url, (await mint()).token);
  const { url } = (await widget('POST', '/v1/embed/connect', { network: 'page_network' })).body;
  await consentInPopup(url, user.user.id);
  account = (await widget('GET', '/v1/embed/accounts')).body.data[0];
});
afterAll(async () => {
  await stack.stop();
  await receiver.close();
});

describe('the widget API', () => {
  // Guarantee: the session route tells the widget its surfaces, workspace (id and name) and expiry.
  it('describes the session', async () => {
    const session = await mint({ surfaces: ['inbox', 'connect'] });
    const res = await api(stack.gateway.url, session.token)('GET', '/v1/embed/session');
    expect(res.status).toBe(200);
    expect(res.body).toMatchObject({
      id: session.id,
      workspace: { id: workspace, name: 'Widget Bakery' },
      surfaces: ['connect', 'inbox'],
    });
    expect(Date.parse(res.body.expires_at)).toBeGreaterThan(Date.now() + 3_500_000);
  });

  // Guarantee: a surface not granted is 403 forbidden; the granted one answers.
  it('refuses surfaces the session was not granted', async () => {
    const inboxOnly = api(stack.gateway.url, (await mint({ surfaces: ['inbox'] })).token);
    for (const [method, path, body] of [
      ['GET', '/v1/embed/accounts'],
      ['POST', '/v1/embed/connect', { network: 'page_network' }],
      ['GET', '/v1/embed/posts'],
      ['POST', '/v1/embed/posts', { caption: 'x', targets: [account.id], draft: true }],
    ] as const) {
      const res = await inboxOnly(method, path, body);
      expect(res.status, path).toBe(403);
      expect(res.body.error).toMatchObject({ code: 'forbidden' });
      expect(res.body.error.message).toContain('surface');
    }
    expect((await inboxOnly('GET', '/v1/embed/conversations')).status).toBe(200);
  });

  // Guarantee: the widget's bodies are the REST ones without `workspace`, which the session fixes.
  it('takes the REST bodies, with the workspace the session fixes', async () => {
    const widget = api(stack.gateway.url, (await mint()).token);
    const post = await widget('POST', '/v1/embed/posts', {
      caption: 'from the widget',
      targets: [account.id],
      draft: true,
    });
    expect(post.status).toBe(201);
    expect(post.body).toMatchObject({ workspace, created_by: 'widget', status: 'draft' });
    const listed = await widget('GET', '/v1/embed/posts');
    expect(listed.body.data.map((p: { id: string }) => p.id)).toContain(post.body.id);
    const named = await widget('POST', '/v1/embed/posts', { workspace, caption: 'x', targets: [account.id] });
    expect(named.body.error).toMatchObject({ code: 'validation_error', field: 'workspace' });
    const bad = await widget('POST', '/v1/embed/posts', { caption: 'x', targets: [] });
    expect(bad.body.error).toMatchObject({ code: 'validation_error', field: 'targets' });
    const badConnect = await widget('POST', '/v1/embed/connect', { network: 'myspace' });
    expect(badConnect.body.error).toMatchObject({ code: 'validation_error', field: 'network' });
  });

  // Guarantee: another workspace's objects do not exist for a session (404), and its lists are empty.
  it('keeps a session inside its workspace', async () => {
    const other = (await partner('POST', '/v1/workspaces', { name: 'Other' })).body.id;
    const session = await partner('POST', '/v1/embed-sessions', {
      workspace: other,
      allowed_origins: ORIGINS,
    });
    const stranger = api(stack.gateway.url, session.body.token);
    expect((await stranger('GET', '/v1/embed/accounts')).body.data).toEqual([]);
    const res = await stranger('DELETE', `/v1/embed/accounts/${account.id}`);
    expect(res.status).toBe(404);
    expect(res.body.error.code).toBe('not_found');
  });

  // Guarantee: the per-session limit (set per partner) refuses with 429, Retry-After and a message
  // naming the embed session; sessions have budgets of their own.
  it('limits each session per minute', async () => {
    const { setPartnerEmbedLimit } = await import('@svc/identity/admin');
    const slug = (await stack.identity.prisma.partner.findUniqueOrThrow({ where: { id: partnerId } })).slug;
    const cache = new AuthCache(stack.gateway.redis, `${stack.prefix}:`);
    await setPartnerEmbedLimit(stack.identity.prisma, cache, slug, 5);
    try {
      const widget = api(stack.gateway.url, (await mint()).token);
      const statuses: number[] = [];
      for (let i = 0; i < 5; i++) statuses.push((await widget('GET', '/v1/embed/session')).status);
      expect(statuses).toEqual([200, 200, 200, 200, 200]);
      const refused = await widget('GET', '/v1/embed/session');
      expect(refused.status).toBe(429);
      expect(refused.body.error.code).toBe('rate_limited');
      expect(refused.body.error.message).toContain('5 requests per minute per embed session');
      expect(Number(refused.headers.get('retry-after'))).toBeGreaterThanOrEqual(1);
      expect((await api(stack.gateway.url, (await mint()).token)('GET', '/v1/embed/session')).status).toBe(
        200,
      );
    } finally {
      await setPartnerEmbedLimit(stack.identity.prisma, cache, slug, 120);
    }
  });
});

describe('the widget stream and sends', () => {
  // Guarantee: an inbound DM sent at the sandbox reaches an open stream within 2 s, and a reply from
  // the widget reaches the partner's webhook as message.sent with source "widget".
  it('streams an inbound DM, and a reply from the widget is message.sent from the widget', async () => {
    const session = await mint();
    const stream = await openStream(stack.gateway.url, session.token);
    expect(stream.response.status).toBe(200);
    expect(stream.response.headers.get('content-type')).toContain('text/event-stream');
    const sentAt = Date.now();
    await stack.sandboxControl('POST', `/__sandbox/pages/${account.platform_id}/messages`, {
      from: { name: 'Stream Person' },
      text: 'is the widget live?',
    });
    const received = await eventually(() => stream.ofType('message.received')[0], 2_000);
    expect(Date.now() - sentAt).toBeLessThan(2_000);
    expect(received.data.message.text).toBe('is the widget live?');
    expect(received).not.toHaveProperty('partner');

    const widget = api(stack.gateway.url, session.token);
    const conversation = received.data.conversation.id;
    const sent = await widget('POST', `/v1/embed/conversations/${conversation}/messages`, { text: 'yes!' });
    expect(sent.status).toBe(201);
    expect(sent.body.source).toBe('widget');
    const delivered = await eventually(() =>
      receiver.requests
        .map((r) => JSON.parse(r.body))
        .find((e) => e.type === 'message.sent' && e.data.message.id === sent.body.id),
    );
    expect(delivered.data.message).toMatchObject({ source: 'widget', text: 'yes!' });
    await eventually(() => stream.ofType('message.sent')[0]);
    await stream.close();
  });

  // Guarantee: an account connected through the widget's popup reaches the stream (how the widget
  // learns the popup finished), and a surface not granted sees nothing of it.
  it('streams account.connected after the consent in the popup', async () => {
    const session = await mint();
    const stream = await openStream(stack.gateway.url, session.token);
    const inboxOnly = await openStream(stack.gateway.url, (await mint({ surfaces: ['inbox'] })).token);
    const widget = api(stack.gateway.url, session.token);
    const connect = await widget('POST', '/v1/embed/connect', { network: 'page_network' });
    expect(connect.status).toBe(201);
    expect(connect.body.url).toMatch(/\/connect\/[^/?]+\/page_network\/start$/);
    const user = await createUser(stack, [{ name: 'Popup Page' }]);
    await consentInPopup(connect.body.url, user.user.id);
    const connected = await eventually(() => stream.ofType('account.connected')[0], 5_000);
    expect(connected.data.account).toMatchObject({ workspace, display_name: 'Popup Page' });
    expect(inboxOnly.ofType('account.connected')).toEqual([]);
    await stream.close();
    await inboxOnly.close();
  });

  // Guarantee: ending the session (on any gateway) ends its stream with session.expired, and the stream
  // carries heartbeat comments.
  it('ends the stream when the session is ended', async () => {
    const other = await stack.startGateway({ EMBED_HEARTBEAT_MS: '200' });
    const session = await mint();
    const stream = await openStream(other.url, session.token);
    await eventually(() => (stream.comments.includes('heartbeat') ? true : undefined), 2_000);
    expect((await partner('DELETE', `/v1/embed-sessions/${session.id}`)).status).toBe(204);
    await eventually(() => (stream.ended ? true : undefined), 3_000);
    expect(stream.ofType('session.expired')).toEqual([{ reason: 'ended' }]);
  });

  // Guarantee: a session's stream ends with session.expired when the session expires.
  it('ends the stream when the session expires', async () => {
    const session = await mint({ expires_in: 60 });
    await stack.identity.prisma.embedSession.update({
      where: { id: session.id },
      data: { expiresAt: new Date(Date.now() + 1_000) },
    });
    const stream = await openStream(stack.gateway.url, session.token);
    await eventually(() => (stream.ended ? true : undefined), 3_000);
    expect(stream.ofType('session.expired')).toEqual([{ reason: 'expired' }]);
  });

  // Guarantee: a gateway stopping ends its open streams, so its ordered stop completes promptly.
  it('closes open streams when the gateway stops', async () => {
    const instance = await stack.system.start('gateway', { label: 'doomed gateway' });
    const session = await mint();
    const stream = await openStream(instance.address, session.token);
    await eventually(() => (stream.comments.includes('connected') ? true : undefined));
    const started = Date.now();
    await stack.system.stopInstance(instance);
    expect(Date.now() - started).toBeLessThan(5_000);
    await eventually(() => (stream.ended ? true : undefined), 2_000);
  });
});
