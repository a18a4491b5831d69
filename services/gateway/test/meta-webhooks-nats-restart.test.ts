import { createHmac } from 'node:crypto';
import { type Bus, connectBus } from '@svc/bus';
import { createLogger } from '@svc/logging';
import { PrivateNats, uniquePrefix } from '@svc/testing';
import { type System, startSystem } from '@svc/testing/system';
import { afterAll, beforeAll, expect, it } from 'vitest';

/**
 * The gateway's Meta webhook endpoint across a NATS restart (its own NATS server, restarted in
 * place with its store). The NATS client drops what is published while it reconnects, so a
 * single 5 s JetStream publish made then was never answered: the gateway answered 503 only after
 * Meta's whole answer budget, and a sender that does not retry lost the message (the fault
 * suite's "restart NATS" case). Now the publish is retried after the reconnect, within the budget.
 */
const APP_SECRET = 'sandbox-app-secret-0123456789abcdef';
const WEBHOOKS = 24;
const EVERY_MS = 100;
const META_ANSWER_BUDGET_MS = 5_000;

let nats: PrivateNats;
let system: System;
let bus: Bus;

beforeAll(async () => {
  nats = await PrivateNats.start();
  system = await startSystem({
    services: ['gateway'],
    sandbox: false,
    prefix: uniquePrefix('natsrestart'),
    env: { NATS_URL: nats.url, LOG_LEVEL: 'silent' },
  });
  bus = await connectBus({
    url: nats.url,
    prefix: system.prefix,
    name: 'nats-restart-test',
    logger: createLogger('test', { level: 'silent' }),
  });
}, 60_000);

afterAll(async () => {
  await bus?.close();
  await system?.stop();
  await nats?.stop();
});

async function deliver(n: number): Promise<number | string> {
  const body = JSON.stringify({ object: 'page', entry: [{ id: '1', time: n, messaging: [] }] });
  const signature = `sha256=${createHmac('sha256', APP_SECRET).update(body).digest('hex')}`;
  try {
    const response = await fetch(`${system.gatewayUrl}/webhooks/meta`, {
      method: 'POST',
      headers: { 'content-type': 'application/json', 'x-hub-signature-256': signature },
      body,
      signal: AbortSignal.timeout(META_ANSWER_BUDGET_MS),
    });
    await response.arrayBuffer();
    return response.status;
  } catch (error) {
    return String(error);
  }
}

// Guarantee: a NATS restart of about a second fails no webhook delivery: each one sent before,
// during and after it is answered 200 within Meta's 5 s, and is on the PROVIDER stream once.
it('answers every webhook 200 within 5 s across a NATS restart, each stored once', async () => {
  const answers: Promise<number | string>[] = [];
  const sending = (async () => {
    for (let n = 0; n < WEBHOOKS; n++) {
      answers.push(deliver(n));
      await new Promise((resolve) => setTimeout(resolve, EVERY_MS));
    }
  })();
  await new Promise((resolve) => setTimeout(resolve, 500));
  await nats.restart(500);
  await sending;
  expect(await Promise.all(answers)).toEqual(Array(WEBHOOKS).fill(200));
  const stream = await bus.jsm.streams.info(bus.subjects.streamName('provider'));
  expect(stream.state.messages).toBe(WEBHOOKS);
}, 60_000);
