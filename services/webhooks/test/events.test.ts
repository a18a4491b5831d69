import { type Bus, connectBus, makeEvent } from '@svc/bus';
import type { EventEnvelope } from '@svc/contracts/public';
import { newId } from '@svc/ids';
import { createLogger } from '@svc/logging';
import { api, eventually, Receiver } from '@svc/testing';
import { type Stack, startStack } from '@svc/testing/stack';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';

let stack: Stack;
let bus: Bus;
let partner: ReturnType<typeof api>;
let other: ReturnType<typeof api>;
const slug = `events-${Date.now().toString(36)}`;
const otherSlug = `${slug}-other`;
const wsA = newId('workspace');
const wsB = newId('workspace');
const T0 = Date.parse('2030-03-01T10:00:00.000Z');
const at = (seconds: number) => new Date(T0 + seconds * 1000);

/** Ten events of the partner, published out of order, two of another partner. */
const events: EventEnvelope[] = [];

async function publish(event: EventEnvelope) {
  await bus.js.publish(bus.subjects.subject(event.type), JSON.stringify(event), { msgID: event.id });
}

beforeAll(async () => {
  stack = await startStack();
  bus = await connectBus({
    url: 'nats://127.0.0.1:4222',
    prefix: stack.prefix,
    name: 'events-test',
    logger: createLogger('events-test', { level: 'warn' }),
  });
  partner = api(stack.gateway.url, (await stack.createPartner(slug)).key);
  other = api(stack.gateway.url, (await stack.createPartner(otherSlug)).key);
  const plan: [string, string, number][] = [
    ['post.published', wsA, 0],
    ['post.failed', wsA, 1],
    ['account.connected', wsB, 2],
    ['post.published', wsB, 3],
    ['message.received', wsA, 4],
    ['post.published', wsA, 5],
    ['comment.received', wsB, 6],
    ['post.partial', wsA, 7],
    ['account.expired', wsB, 8],
    ['post.published', wsA, 9],
  ];
  for (const [type, workspace, second] of plan)
    events.push(
      makeEvent(
        type,
        { partner: slug, workspace, external_id: `ext-${workspace}` },
        { n: second },
        at(second),
      ),
    );
  for (const event of [...events].reverse()) await publish(event);
  for (const s of [0, 5])
    await publish(
      makeEvent('post.published', { partner: otherSlug, workspace: wsA, external_id: null }, {}, at(s)),
    );
  await eventually(async () =>
    (await partner('GET', '/v1/events')).body.total === events.length ? true : undefined,
  );
});
afterAll(async () => {
  await bus.close();
  await stack.stop();
});

const ids = (list: { id: string }[]) => list.map((e) => e.id);

describe('GET /v1/events', () => {
  // Guarantee: oldest first, default page 1 / limit 50, each item exactly the envelope a delivery carries,
  // listed although the partner has no webhook, and only the caller's own events.
  it('lists the partner events oldest first, exactly as delivered', async () => {
    const res = await partner('GET', '/v1/events');
    expect(res.status).toBe(200);
    expect(res.body).toEqual({ data: events, page: 1, limit: 50, total: 10 });
    const theirs = await other('GET', '/v1/events');
    expect(theirs.body.total).toBe(2);
    expect(theirs.body.data.every((e: EventEnvelope) => e.partner === otherSlug)).toBe(true);
  });

  // Guarantee: each filter, alone and combined, selects exactly the matching events.
  it('filters by workspace, type and since', async () => {
    const list = async (query: string) => (await partner('GET', `/v1/events?${query}`)).body;
    expect(ids((await list(`workspace=${wsB}`)).data)).toEqual(
      ids(events.filter((e) => e.workspace === wsB)),
    );
    expect(ids((await list('type=post.published')).data)).toEqual(
      ids(events.filter((e) => e.type === 'post.published')),
    );
    // `since` is exclusive: the event created exactly then is not "after" it.
    const since = at(5).toISOString();
    expect(ids((await list(`since=${since}`)).data)).toEqual(ids(events.slice(6)));
    expect(ids((await list(`since=${encodeURIComponent('2030-03-01T12:00:05+02:00')}`)).data)).toEqual(
      ids(events.slice(6)),
    );
    const combined = await list(`workspace=${wsA}&type=post.published&since=${at(0).toISOString()}`);
    expect(ids(combined.data)).toEqual(ids([events[5], events[9]] as EventEnvelope[]));
    expect(combined.total).toBe(2);
    expect(await list(`workspace=${newId('workspace')}`)).toEqual({ data: [], page: 1, limit: 50, total: 0 });
    expect((await list(`since=${at(9).toISOString()}`)).total).toBe(0);
  });

  // Guarantee: pages are stable slices with the total, at every edge (first, last, beyond, max limit).
  it('pages at every edge', async () => {
    const list = async (query: string) => (await partner('GET', `/v1/events?${query}`)).body;
    expect(await list('limit=3')).toMatchObject({ page: 1, limit: 3, total: 10 });
    expect(ids((await list('limit=3&page=1')).data)).toEqual(ids(events.slice(0, 3)));
    expect(ids((await list('limit=3&page=4')).data)).toEqual(ids(events.slice(9)));
    expect(await list('limit=3&page=5')).toEqual({ data: [], page: 5, limit: 3, total: 10 });
    expect(ids((await list('limit=1&page=10')).data)).toEqual([events[9]?.id]);
    expect(await list('limit=200')).toMatchObject({ limit: 200, total: 10 });
    const pages = [];
    for (let page = 1; page <= 4; page++) pages.push(...(await list(`limit=3&page=${page}`)).data);
    expect(ids(pages)).toEqual(ids(events));
  });

  // Guarantee: a page and its total are one moment's view, also while events are being stored:
  // a client reading pages until they add up to the total never waits on an event it cannot get.
  it('answers a total that agrees with its page while events arrive', async () => {
    const workspace = newId('workspace');
    const arriving = Array.from({ length: 150 }, (_, n) =>
      makeEvent('post.published', { partner: slug, workspace, external_id: null }, { n }, at(20 + n)),
    );
    let published = false;
    const publishing = (async () => {
      for (const event of arriving) await publish(event);
    })().finally(() => {
      published = true;
    });
    const disagreements: string[] = [];
    const deadline = Date.now() + 20_000;
    let total = 0;
    while ((!published || total < arriving.length) && Date.now() < deadline) {
      const page = (await partner('GET', `/v1/events?workspace=${workspace}&limit=200`)).body;
      total = page.total;
      if (page.data.length !== page.total)
        disagreements.push(`${page.data.length} listed, total ${page.total}`);
    }
    await publishing;
    expect(total).toBe(arriving.length);
    expect(disagreements).toEqual([]);
  });

  // Guarantee: bad query values are refused with 400 validation_error naming the field.
  it.each([
    ['limit=0', 'limit'],
    ['limit=201', 'limit'],
    ['limit=abc', 'limit'],
    ['limit=1.5', 'limit'],
    ['page=0', 'page'],
    ['page=-1', 'page'],
    ['page=x', 'page'],
    ['since=yesterday', 'since'],
    ['since=2030-13-01T00:00:00Z', 'since'],
    ['type=post.deleted', 'type'],
    ['type=', 'type'],
    ['workspace=nope', 'workspace'],
    ['workspace=', 'workspace'],
    ['color=blue', 'color'],
  ])('refuses ?%s naming %s', async (query, field) => {
    const res = await partner('GET', `/v1/events?${query}`);
    expect(res.status).toBe(400);
    expect(res.body.error).toMatchObject({ code: 'validation_error', field });
  });

  // Guarantee: a workspace key cannot list events (403), even its own workspace's.
  it('refuses a workspace key', async () => {
    const workspace = (await partner('POST', '/v1/workspaces', { name: 'events' })).body.id;
    const key = (await partner('POST', `/v1/workspaces/${workspace}/keys`, { label: 'w' })).body.key;
    const res = await api(stack.gateway.url, key)('GET', `/v1/events?workspace=${workspace}`);
    expect(res.status).toBe(403);
    expect(res.body.error.code).toBe('forbidden');
  });
});

describe('deliveries of an event', () => {
  // Guarantee: every attempt is listed with its outcome and the delivery state; redeliver queues one
  // more; both are scoped to the caller's own events.
  it('lists attempts and redelivers on request', async () => {
    const receiver = await Receiver.start();
    try {
      const { key } = await stack.createPartner(`${slug}-hooked`);
      const hooked = api(stack.gateway.url, key);
      await hooked('PUT', '/v1/webhook', { url: receiver.url });
      const event = makeEvent(
        'post.published',
        { partner: `${slug}-hooked`, workspace: wsA, external_id: null },
        {},
      );
      await publish(event);
      await eventually(() => (receiver.deliveriesOf(event.id).length === 1 ? true : undefined));
      const listed = await eventually(async () => {
        const res = await hooked('GET', `/v1/events/${event.id}/deliveries`);
        return res.body.state === 'delivered' ? res : undefined;
      });
      expect(listed.status).toBe(200);
      expect(listed.body).toEqual({
        data: [
          {
            id: expect.stringMatching(/^dlv_/),
            event_id: event.id,
            number: 1,
            url: receiver.url,
            attempted_at: expect.any(String),
            status_code: 200,
            error: null,
            latency_ms: expect.any(Number),
            succeeded: true,
          },
        ],
        page: 1,
        limit: 50,
        total: 1,
        state: 'delivered',
        next_attempt_at: null,
      });

      const queued = await hooked('POST', `/v1/events/${event.id}/redeliver`);
      expect(queued.status).toBe(200);
      expect(queued.body).toEqual({
        event_id: event.id,
        state: 'pending',
        next_attempt_at: expect.any(String),
      });
      await eventually(() => (receiver.deliveriesOf(event.id).length === 2 ? true : undefined));
      const after = await eventually(async () => {
        const res = await hooked('GET', `/v1/events/${event.id}/deliveries`);
        return res.body.total === 2 && res.body.state === 'delivered' ? res : undefined;
      });
      expect(after.body.data.map((a: { number: number }) => a.number)).toEqual([1, 2]);

      // Not the caller's event: 404, as if it did not exist.
      expect((await partner('GET', `/v1/events/${event.id}/deliveries`)).status).toBe(404);
      const foreign = await partner('POST', `/v1/events/${event.id}/redeliver`);
      expect(foreign.status).toBe(404);
      expect(foreign.body.error.code).toBe('not_found');
    } finally {
      await receiver.close();
    }
  });

  // Guarantee: ids are opaque (a malformed one is not found, like an unknown one), and
  // redelivering without a webhook is a 409 conflict.
  it('refuses bad ids, unknown events and redelivery without a webhook', async () => {
    const bad = await partner('GET', '/v1/events/evt_bad/deliveries');
    expect(bad.status).toBe(404);
    expect(bad.body.error).toEqual({ code: 'not_found', message: 'event not found' });
    const unknown = await partner('GET', `/v1/events/${newId('event')}/deliveries`);
    expect(unknown.status).toBe(404);
    const noWebhook = await partner('POST', `/v1/events/${events[0]?.id}/redeliver`);
    expect(noWebhook.status).toBe(409);
    expect(noWebhook.body.error.code).toBe('conflict');
    const never = await partner('GET', `/v1/events/${events[0]?.id}/deliveries`);
    expect(never.body).toEqual({
      data: [],
      page: 1,
      limit: 50,
      total: 0,
      state: null,
      next_attempt_at: null,
    });
  });
});
