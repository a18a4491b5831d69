import { makeEvent } from '@svc/bus';
import { eventually, Receiver } from '@svc/testing';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { sleep, startWebhooksStack, type WebhooksStack } from './harness.ts';

const CONCURRENCY = 16;
const PER_ENDPOINT = 4;

let stack: WebhooksStack;
let healthy: Receiver;
let healthyPartner: { id: string; slug: string };

beforeAll(async () => {
  stack = await startWebhooksStack({
    WEBHOOK_TIMEOUT_MS: '3000',
    WEBHOOK_CONCURRENCY: String(CONCURRENCY),
    WEBHOOK_CONCURRENCY_PER_ENDPOINT: String(PER_ENDPOINT),
    WEBHOOK_RETRY_SHARE_PERCENT: '50',
  });
  healthy = await Receiver.start();
  healthyPartner = await stack.partnerWithWebhook(healthy.url);
});
afterAll(async () => {
  await stack.stop();
  await healthy.close();
});

/** Publishes fresh events for the healthy partner and returns each one's publish-to-arrival delay. */
async function freshDelays(count: number): Promise<number[]> {
  const published = [];
  for (let i = 0; i < count; i++)
    published.push({ at: Date.now(), ...(await stack.publish(healthyPartner.slug)) });
  return Promise.all(
    published.map(async ({ at, event }) => {
      const [request] = await eventually(() => {
        const found = healthy.deliveriesOf(event.id);
        return found.length > 0 ? found : undefined;
      });
      return (request?.at ?? 0) - at;
    }),
  );
}

describe('isolation between partners', () => {
  // Guarantee: an endpoint that hangs until the deadline holds at most its per-endpoint slots and does
  // not delay another partner's first attempts, even with a backlog of its own older fresh events.
  it('keeps a hanging endpoint from delaying other partners', async () => {
    const hanging = await Receiver.start();
    hanging.behaviour = () => {}; // never answers: each attempt runs into the deadline
    try {
      const slow = await stack.partnerWithWebhook(hanging.url);
      for (let i = 0; i < 40; i++) await stack.publish(slow.slug);
      await eventually(() => (hanging.inFlight === PER_ENDPOINT ? true : undefined));
      const delays = await freshDelays(5);
      expect(Math.max(...delays)).toBeLessThan(1_000);
      await sleep(200);
      expect(hanging.maxInFlight).toBe(PER_ENDPOINT);
    } finally {
      await hanging.close();
    }
  });

  // Guarantee: a backlog of retries (many failing partners) takes only its share of the slots, so
  // fresh events still go out at once.
  it('never lets retries starve first attempts', async () => {
    const failing = await Receiver.start();
    failing.behaviour = (_request, response) => {
      setTimeout(() => response.writeHead(500).end(), 1_500);
    };
    try {
      const now = new Date();
      for (let p = 0; p < 10; p++) {
        const partner = await stack.partnerWithWebhook(`${failing.url}/${p}`);
        for (let i = 0; i < 10; i++) {
          // A retry that is due: the first attempt failed a minute ago.
          const event = makeEvent(
            'post.failed',
            { partner: partner.slug, workspace: null, external_id: null },
            {},
          );
          await stack.db.query(
            `INSERT INTO events (id, type, partner_slug, created_at, body, stored_at) VALUES ($1, $2, $3, $4, $5, $4)`,
            [event.id, event.type, partner.slug, now, JSON.stringify(event)],
          );
          await stack.db.query(
            `INSERT INTO deliveries (event_id, partner_id, state, attempt_count, max_attempts, next_attempt_at, created_at, updated_at)
             VALUES ($1, $2, 'pending', 1, 6, $3, $3, $3)`,
            [event.id, partner.id, now],
          );
        }
      }
      stack.service.worker.kick();
      await eventually(() => (failing.inFlight > 0 ? true : undefined));
      const delays = await freshDelays(5);
      expect(Math.max(...delays)).toBeLessThan(750);
      expect(failing.maxInFlight).toBeLessThanOrEqual(CONCURRENCY / 2);
      expect(failing.maxInFlight).toBeGreaterThan(PER_ENDPOINT);
    } finally {
      await failing.close();
    }
  });
});
