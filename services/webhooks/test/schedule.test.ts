import { verifyWebhook } from '@svc/sdk';
import { eventually, Receiver } from '@svc/testing';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { ATTEMPT_DELAYS_MS } from '../src/delivery/schedule.ts';
import { FakeClock } from './clock.ts';
import { sleep, startWebhooksStack, type WebhooksStack } from './harness.ts';

let stack: WebhooksStack;
let receiver: Receiver;
const clock = new FakeClock();
let partner: { id: string; slug: string; secret: string };

beforeAll(async () => {
  stack = await startWebhooksStack({ WEBHOOK_POLL_MS: '20' }, { clock });
  receiver = await Receiver.start();
  partner = await stack.partnerWithWebhook(receiver.url);
});
afterAll(async () => {
  await stack.stop();
  await receiver.close();
});

async function delivery(eventId: string) {
  const { rows } = await stack.db.query(
    'SELECT state, attempt_count, next_attempt_at FROM deliveries WHERE event_id = $1',
    [eventId],
  );
  return rows[0];
}

/** Moves the fake clock and lets the worker look (it polls every 20 ms of real time). */
async function advance(ms: number) {
  clock.advance(ms);
  stack.service.worker.kick();
  await sleep(150);
}

describe('retry schedule (fake clock)', () => {
  // Guarantee: six attempts at 0, +1 min, +5 min, +30 min, +2 h, +12 h, each counted from the
  // previous failure, never one early, each freshly timestamped and signed over identical bytes;
  // then undelivered and never sent again.
  it('runs the six attempts on time, then marks the event undelivered', async () => {
    receiver.behaviour = (_request, response) => response.writeHead(503).end();
    const { event, raw } = await stack.publish(partner.slug);
    await eventually(() => (receiver.deliveriesOf(event.id).length === 1 ? true : undefined));
    const sentAt: number[] = [clock.now().getTime()];

    for (const delay of ATTEMPT_DELAYS_MS.slice(1)) {
      const attemptsSoFar = sentAt.length;
      await eventually(async () =>
        (await delivery(event.id))?.attempt_count === attemptsSoFar ? true : undefined,
      );
      await advance(delay - 1);
      expect(receiver.deliveriesOf(event.id), `no attempt 1 ms before the +${delay} ms retry`).toHaveLength(
        attemptsSoFar,
      );
      await advance(1);
      await eventually(() =>
        receiver.deliveriesOf(event.id).length === attemptsSoFar + 1 ? true : undefined,
      );
      sentAt.push(clock.now().getTime());
    }

    await eventually(async () => ((await delivery(event.id))?.state === 'undelivered' ? true : undefined));
    expect(await delivery(event.id)).toMatchObject({ attempt_count: 6, next_attempt_at: null });
    await advance(48 * 3_600_000);
    expect(receiver.deliveriesOf(event.id)).toHaveLength(6);

    const requests = receiver.deliveriesOf(event.id);
    requests.forEach((request, index) => {
      expect(request.body, 'identical bytes on every attempt').toBe(raw);
      const at = sentAt[index] ?? 0;
      expect(request.headers['x-service-timestamp']).toBe(String(Math.floor(at / 1000)));
      // A receiver checking the timestamp against its clock at that moment accepts even the late retries.
      expect(
        verifyWebhook({ secret: partner.secret, headers: request.headers, rawBody: request.body, now: at })
          .id,
      ).toBe(event.id);
    });
    expect(new Set(requests.map((r) => r.headers['x-service-signature'])).size).toBe(6);
    const { rows } = await stack.db.query(
      'SELECT number, status_code, succeeded, attempted_at FROM delivery_attempts WHERE event_id = $1 ORDER BY number',
      [event.id],
    );
    expect(rows.map((r) => [r.number, r.status_code, r.succeeded])).toEqual(
      [1, 2, 3, 4, 5, 6].map((n) => [n, 503, false]),
    );
    expect(rows.map((r) => r.attempted_at.getTime())).toEqual(sentAt);
  });

  // Guarantee: a retry that succeeds ends the schedule (delivered, nothing more is sent).
  it('stops retrying once an attempt succeeds', async () => {
    let calls = 0;
    receiver.behaviour = (_request, response) => response.writeHead(++calls === 1 ? 500 : 200).end();
    const { event } = await stack.publish(partner.slug);
    await eventually(async () => ((await delivery(event.id))?.attempt_count === 1 ? true : undefined));
    await advance(60_000);
    await eventually(async () => ((await delivery(event.id))?.state === 'delivered' ? true : undefined));
    await advance(24 * 3_600_000);
    expect(receiver.deliveriesOf(event.id)).toHaveLength(2);
  });

  // Guarantee: redeliver queues exactly one fresh attempt for an undelivered (or delivered) event.
  it('redelivers an undelivered event once, on request', async () => {
    receiver.behaviour = (_request, response) => response.writeHead(500).end();
    const { event } = await stack.publish(partner.slug);
    await eventually(async () => ((await delivery(event.id))?.attempt_count === 1 ? true : undefined));
    for (const delay of ATTEMPT_DELAYS_MS.slice(1)) {
      const before = receiver.deliveriesOf(event.id).length;
      await advance(delay);
      await eventually(async () =>
        (await delivery(event.id))?.attempt_count === before + 1 ? true : undefined,
      );
    }
    expect((await delivery(event.id)).state).toBe('undelivered');

    const queued = await stack.client.redeliverEvent({
      partnerId: partner.id,
      partnerSlug: partner.slug,
      eventId: event.id,
    });
    expect(queued).toMatchObject({
      eventId: event.id,
      state: 'pending',
      nextAttemptAt: clock.now().toISOString(),
    });
    await eventually(async () => ((await delivery(event.id))?.state === 'undelivered' ? true : undefined));
    expect(receiver.deliveriesOf(event.id)).toHaveLength(7);
    await advance(24 * 3_600_000);
    expect(receiver.deliveriesOf(event.id)).toHaveLength(7);

    receiver.behaviour = (_request, response) => response.writeHead(200).end();
    await stack.client.redeliverEvent({
      partnerId: partner.id,
      partnerSlug: partner.slug,
      eventId: event.id,
    });
    await eventually(async () => ((await delivery(event.id))?.state === 'delivered' ? true : undefined));
    await stack.client.redeliverEvent({
      partnerId: partner.id,
      partnerSlug: partner.slug,
      eventId: event.id,
    });
    await eventually(async () => ((await delivery(event.id))?.attempt_count === 9 ? true : undefined));
    const { attempts, state } = await stack.client.listDeliveryAttempts({
      partnerSlug: partner.slug,
      eventId: event.id,
      page: 1,
      limit: 50,
    });
    expect(attempts.map((a) => a.number)).toEqual([1, 2, 3, 4, 5, 6, 7, 8, 9]);
    expect(attempts.map((a) => a.succeeded)).toEqual([...Array(7).fill(false), true, true]);
    expect(state).toBe('delivered');
  });

  const redeliver = (eventId: string) =>
    stack.client.redeliverEvent({ partnerId: partner.id, partnerSlug: partner.slug, eventId });

  // Guarantee: redeliver while a retry is scheduled attempts at once and takes that retry's place:
  // when it succeeds, nothing more is sent, the scheduled retry included.
  it('brings a scheduled retry forward, and a success ends the schedule', async () => {
    receiver.behaviour = (_request, response) => response.writeHead(500).end();
    const { event } = await stack.publish(partner.slug);
    await eventually(async () => ((await delivery(event.id))?.attempt_count === 1 ? true : undefined));
    receiver.behaviour = (_request, response) => response.writeHead(200).end();
    const queued = await redeliver(event.id);
    expect(queued).toMatchObject({ state: 'pending', nextAttemptAt: clock.now().toISOString() });
    await eventually(async () => ((await delivery(event.id))?.state === 'delivered' ? true : undefined));
    expect(receiver.deliveriesOf(event.id)).toHaveLength(2);
    await advance(24 * 3_600_000);
    expect(receiver.deliveriesOf(event.id)).toHaveLength(2);
  });

  // Guarantee: when the brought-forward attempt fails, the schedule goes on from it (the next step's
  // delay counted from this failure), with no attempt added to the six.
  it('goes on with the schedule when the brought-forward attempt fails', async () => {
    receiver.behaviour = (_request, response) => response.writeHead(500).end();
    const { event } = await stack.publish(partner.slug);
    await eventually(async () => ((await delivery(event.id))?.attempt_count === 1 ? true : undefined));
    await advance(10_000);
    await redeliver(event.id);
    await eventually(async () => ((await delivery(event.id))?.attempt_count === 2 ? true : undefined));
    const after = await delivery(event.id);
    expect(after.state).toBe('pending');
    expect(after.next_attempt_at.getTime()).toBe(clock.now().getTime() + (ATTEMPT_DELAYS_MS[2] ?? 0));
    const { rows } = await stack.db.query('SELECT max_attempts FROM deliveries WHERE event_id = $1', [
      event.id,
    ]);
    expect(rows[0].max_attempts).toBe(6);
    await advance((ATTEMPT_DELAYS_MS[2] ?? 0) - 1);
    expect(receiver.deliveriesOf(event.id)).toHaveLength(2);
    await advance(1);
    await eventually(() => (receiver.deliveriesOf(event.id).length === 3 ? true : undefined));
  });

  // Guarantee: only an attempt in flight at that moment refuses a redelivery (409); its outcome stands.
  it('refuses a redelivery only while an attempt is in flight', async () => {
    const held: (() => void)[] = [];
    receiver.behaviour = (_request, response) => held.push(() => response.writeHead(200).end());
    const { event } = await stack.publish(partner.slug);
    await eventually(() => (held.length === 1 ? true : undefined));
    await expect(redeliver(event.id)).rejects.toMatchObject({ code: 'conflict' });
    held[0]?.();
    await eventually(async () => ((await delivery(event.id))?.state === 'delivered' ? true : undefined));
    expect(receiver.deliveriesOf(event.id)).toHaveLength(1);
  });
});
