import { eventually, Receiver } from '@svc/testing';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { sleep, startWebhooksStack, type WebhooksStack } from './harness.ts';

let stack: WebhooksStack;
let receiver: Receiver;

beforeAll(async () => {
  // The stack's own process answers the API only, as the `webhooks-api` Deployment runs it.
  stack = await startWebhooksStack({ WEBHOOKS_ROLE: 'api', WEBHOOK_POLL_MS: '10' });
  receiver = await Receiver.start();
});
afterAll(async () => {
  await stack.stop();
  await receiver.close();
});

describe('WEBHOOKS_ROLE', () => {
  // Guarantee: the API and the delivery workers can run (and scale) apart: an API-only process
  // neither stores nor delivers events, yet still sends a test ping itself; a worker-only process
  // stores and delivers them, and serves no gRPC.
  it('splits the API from the event store and delivery workers', async () => {
    receiver.behaviour = (_request, response) => response.writeHead(200).end();
    const partner = await stack.partnerWithWebhook(receiver.url);
    const { event } = await stack.publish(partner.slug);
    await sleep(600);
    expect(receiver.requests).toHaveLength(0);

    const { attempt } = await stack.client.testWebhook({ partnerId: partner.id, partnerSlug: partner.slug });
    expect(attempt?.succeeded).toBe(true);
    expect(receiver.requests).toHaveLength(1);

    const worker = await stack.startReplica({ WEBHOOKS_ROLE: 'worker' });
    expect(worker.port).toBe(0);
    await eventually(() => (receiver.requests.length >= 2 ? true : undefined), 10_000);
    const delivered = receiver.requests.map((r) => String(r.headers['x-service-delivery']));
    expect(delivered[1]).toBe(event.id);
  });
});
