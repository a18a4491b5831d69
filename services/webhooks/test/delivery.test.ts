import { verifyWebhook } from '@svc/sdk';
import { eventually, Receiver } from '@svc/testing';
import { afterAll, beforeAll, beforeEach, describe, expect, it } from 'vitest';
import { startWebhooksStack, type WebhooksStack } from './harness.ts';

let stack: WebhooksStack;
let receiver: Receiver;
let partner: { id: string; slug: string; secret: string };

beforeAll(async () => {
  stack = await startWebhooksStack({ WEBHOOK_TIMEOUT_MS: '1000' });
  receiver = await Receiver.start();
  partner = await stack.partnerWithWebhook(receiver.url);
});
afterAll(async () => {
  await stack.stop();
  await receiver.close();
});
beforeEach(() => {
  receiver.behaviour = (_request, response) => response.writeHead(200).end('ok');
});

async function attemptsOf(eventId: string) {
  const { rows } = await stack.db.query(
    'SELECT number, status_code, error, succeeded, latency_ms FROM delivery_attempts WHERE event_id = $1 ORDER BY number',
    [eventId],
  );
  return rows;
}

async function stateOf(eventId: string): Promise<string | undefined> {
  const { rows } = await stack.db.query('SELECT state FROM deliveries WHERE event_id = $1', [eventId]);
  return rows[0]?.state;
}

describe('signed delivery', () => {
  // Guarantee: a delivery carries the spec's headers and a signature the SDK helper verifies, over
  // the exact bytes stored for the event.
  it('delivers the stored bytes with headers the SDK verifies', async () => {
    const { event, raw } = await stack.publish(partner.slug, 'post.published', { externalId: 'cust-1' });
    const [request] = await eventually(() => {
      const found = receiver.deliveriesOf(event.id);
      return found.length > 0 ? found : undefined;
    });
    expect(request?.method).toBe('POST');
    expect(request?.headers).toMatchObject({
      'content-type': 'application/json',
      'x-service-event': 'post.published',
      'x-service-delivery': event.id,
      'x-service-timestamp': expect.stringMatching(/^\d{10}$/),
      'x-service-signature': expect.stringMatching(/^sha256=[0-9a-f]{64}$/),
    });
    expect(Math.abs(Number(request?.headers['x-service-timestamp']) - Date.now() / 1000)).toBeLessThan(5);
    expect(request?.body).toBe(raw);
    const verified = verifyWebhook({
      secret: partner.secret,
      headers: request?.headers ?? {},
      rawBody: request?.body ?? '',
    });
    expect(verified).toEqual(event);
    const { rows } = await stack.db.query('SELECT body FROM events WHERE id = $1', [event.id]);
    expect(rows[0].body).toBe(raw);
    await eventually(async () => ((await stateOf(event.id)) === 'delivered' ? true : undefined));
    expect(await attemptsOf(event.id)).toEqual([
      { number: 1, status_code: 200, error: null, succeeded: true, latency_ms: expect.any(Number) },
    ]);
  });

  // Guarantee: the test ping has the spec's shape and the call answers with what happened.
  it('sends a ping through the delivery path and answers with the attempt', async () => {
    const { attempt } = await stack.client.testWebhook({ partnerId: partner.id, partnerSlug: partner.slug });
    expect(attempt).toMatchObject({
      succeeded: true,
      statusCode: 200,
      error: '',
      number: 1,
      url: receiver.url,
    });
    const request = receiver.deliveriesOf(attempt?.eventId ?? '')[0];
    const ping = verifyWebhook<{ message: string; sent_at: string }>({
      secret: partner.secret,
      headers: request?.headers ?? {},
      rawBody: request?.body ?? '',
    });
    expect(ping).toMatchObject({ type: 'ping', partner: partner.slug, workspace: null, external_id: null });
    expect(ping.data).toEqual({ message: expect.any(String), sent_at: ping.created_at });
    expect(request?.headers['x-service-event']).toBe('ping');
    expect(await stateOf(ping.id)).toBe('delivered');
  });
});

describe('outcomes', () => {
  const ping = () => stack.client.testWebhook({ partnerId: partner.id, partnerSlug: partner.slug });

  // Guarantee: any 2xx is a success, whatever the body.
  it.each([200, 201, 202, 204, 299])('counts %i as delivered', async (status) => {
    receiver.behaviour = (_request, response) =>
      response.writeHead(status).end(status === 204 ? '' : 'whatever');
    const { attempt } = await ping();
    expect(attempt).toMatchObject({ succeeded: true, statusCode: status });
    expect(await stateOf(attempt?.eventId ?? '')).toBe('delivered');
  });

  // Guarantee: a 3xx is not followed (the Location is never requested) and counts as a failure.
  it.each([301, 302, 307, 308])('does not follow a %i and fails the attempt', async (status) => {
    receiver.behaviour = (request, response) =>
      request.path === '/moved'
        ? response.writeHead(200).end()
        : response.writeHead(status, { location: `http://127.0.0.1:${receiver.port}/moved` }).end();
    const { attempt } = await ping();
    expect(attempt).toMatchObject({
      succeeded: false,
      statusCode: status,
      error: `redirect ${status} not followed`,
    });
    expect(receiver.requests.filter((r) => r.path === '/moved')).toHaveLength(0);
    const [row] = await attemptsOf(attempt?.eventId ?? '');
    expect(row).toMatchObject({ status_code: status, succeeded: false });
    expect(await stateOf(attempt?.eventId ?? '')).toBe('pending');
  });

  // Guarantee: 4xx and 5xx fail and schedule a retry.
  it.each([400, 401, 404, 410, 429, 500, 502, 503])('fails on %i and schedules a retry', async (status) => {
    receiver.behaviour = (_request, response) => response.writeHead(status).end('nope');
    const { attempt } = await ping();
    expect(attempt).toMatchObject({ succeeded: false, statusCode: status, error: `HTTP ${status}` });
    const { rows } = await stack.db.query(
      'SELECT state, attempt_count, next_attempt_at FROM deliveries WHERE event_id = $1',
      [attempt?.eventId],
    );
    expect(rows[0]).toMatchObject({ state: 'pending', attempt_count: 1 });
    const wait = rows[0].next_attempt_at.getTime() - Date.parse(attempt?.attemptedAt ?? '');
    expect(wait).toBeGreaterThanOrEqual(60_000);
    expect(wait).toBeLessThan(62_000);
  });

  // Guarantee: an endpoint that never answers is cut at the configured deadline.
  it('fails on a timeout at the deadline', async () => {
    receiver.behaviour = () => {}; // never answers
    const { attempt } = await ping();
    expect(attempt).toMatchObject({ succeeded: false, error: 'timed out after 1000 ms' });
    expect(attempt?.statusCode).toBeUndefined();
    expect(attempt?.latencyMs).toBeGreaterThanOrEqual(990);
    expect(attempt?.latencyMs).toBeLessThan(1_500);
  });

  // Guarantee: a refused connection fails the attempt (and does not crash anything).
  it('fails when the connection is refused', async () => {
    const closed = await Receiver.start();
    const url = closed.url;
    await closed.close();
    const other = await stack.partnerWithWebhook(url);
    const { attempt } = await stack.client.testWebhook({ partnerId: other.id, partnerSlug: other.slug });
    expect(attempt).toMatchObject({ succeeded: false, error: 'connection refused' });
    expect(attempt?.statusCode).toBeUndefined();
  });
});

describe('event store', () => {
  // Guarantee: an event NATS delivers twice (a redelivery the stream's de-duplication cannot see)
  // is stored once and scheduled once.
  it('stores and delivers a redelivered event once', async () => {
    const { event, raw } = await stack.publish(partner.slug);
    await stack.publishRaw(event.type, raw, `${event.id}-again`);
    await stack.publishRaw(event.type, raw, `${event.id}-third`);
    await eventually(() => (receiver.deliveriesOf(event.id).length > 0 ? true : undefined));
    // The later copies were consumed too: a marker event published after them has been stored.
    const marker = await stack.publish(partner.slug);
    await eventually(() => (receiver.deliveriesOf(marker.event.id).length > 0 ? true : undefined));
    const { rows } = await stack.db.query('SELECT count(*)::int AS n FROM events WHERE id = $1', [event.id]);
    expect(rows[0].n).toBe(1);
    expect(receiver.deliveriesOf(event.id)).toHaveLength(1);
    expect(await attemptsOf(event.id)).toHaveLength(1);
  });

  // Guarantee: events of a partner without a webhook are stored (listable) and never scheduled.
  it('stores events of a partner without a webhook, with nothing to deliver', async () => {
    const { event } = await stack.publish('no-webhook-partner');
    const stored = await eventually(async () => {
      const { rows } = await stack.db.query('SELECT partner_slug, type FROM events WHERE id = $1', [
        event.id,
      ]);
      return rows[0];
    });
    expect(stored).toEqual({ partner_slug: 'no-webhook-partner', type: 'post.published' });
    expect(await stateOf(event.id)).toBeUndefined();
  });

  // Guarantee: a message that is not an event envelope is dropped with a log line, not retried forever,
  // and does not block the events behind it.
  it('drops a malformed message and carries on', async () => {
    await stack.publishRaw('post.published', '{"not":"an event"}', 'malformed-1');
    const { event } = await stack.publish(partner.slug);
    await eventually(() => (receiver.deliveriesOf(event.id).length > 0 ? true : undefined));
    expect(stack.logs.some((l) => l.msg === 'dropped a message that is not an event envelope')).toBe(true);
  });
});
