import { eventually, Receiver } from '@svc/testing';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { sleep, startWebhooksStack, type WebhooksStack } from './harness.ts';

let stack: WebhooksStack;
let receiver: Receiver;

beforeAll(async () => {
  stack = await startWebhooksStack({ WEBHOOK_POLL_MS: '10' });
  await stack.startReplica();
  await stack.startReplica();
  receiver = await Receiver.start();
});
afterAll(async () => {
  await stack.stop();
  await receiver.close();
});

describe('several replicas', () => {
  // Guarantee: three replicas sharing the schedule (SKIP LOCKED claims) and the durable consumer send
  // each attempt once in normal operation, and every event is stored once.
  it('delivers every event exactly once across replicas', async () => {
    receiver.behaviour = (_request, response) => setTimeout(() => response.writeHead(200).end(), 2);
    const partners = await Promise.all([0, 1, 2].map(() => stack.partnerWithWebhook(receiver.url)));
    const ids: string[] = [];
    await Promise.all(
      Array.from({ length: 300 }, async (_, i) => {
        const { event } = await stack.publish(partners[i % 3]?.slug ?? '');
        ids.push(event.id);
      }),
    );
    await eventually(() => (receiver.requests.length >= 300 ? true : undefined), 20_000);
    await sleep(500);
    const delivered = receiver.requests.map((r) => String(r.headers['x-service-delivery']));
    expect(delivered).toHaveLength(300);
    expect(new Set(delivered)).toEqual(new Set(ids));
    const { rows } = await stack.db.query(
      `SELECT count(*)::int AS events, count(*) FILTER (WHERE d.state = 'delivered')::int AS delivered,
              (SELECT count(*)::int FROM delivery_attempts) AS attempts
         FROM events e JOIN deliveries d ON d.event_id = e.id`,
    );
    expect(rows[0]).toEqual({ events: 300, delivered: 300, attempts: 300 });
  });
});
