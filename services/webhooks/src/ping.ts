import { randomUUID } from 'node:crypto';
import { makeEvent } from '@svc/bus';
import { errors } from '@svc/errors';
import type pg from 'pg';
import type { Clock } from './clock.ts';
import type { Db } from './db.ts';
import type { AttemptRecord } from './delivery/queue.ts';
import { MAX_ATTEMPTS } from './delivery/schedule.ts';
import type { DeliveryWorker } from './delivery/worker.ts';
import { readEnvelope, storeEvents } from './event-store.ts';

const noWebhookToTest = () => errors.conflict('no webhook is configured: set one with PUT /v1/webhook first');

/**
 * POST /v1/webhook/test: makes a `ping` event here (not through NATS), stores it like any event
 * with its delivery already claimed by this call, sends the first attempt through the worker's
 * own path and answers with it. If it fails, the retry schedule takes over like for any event.
 */
export async function sendPing(
  deps: { db: Db; pool: pg.Pool; clock: Clock; worker: DeliveryWorker },
  partner: { id: string; slug: string },
): Promise<AttemptRecord> {
  const webhook = await deps.db.webhook.findUnique({ where: { partnerId: partner.id } });
  if (!webhook) throw noWebhookToTest();
  const now = deps.clock.now();
  const event = makeEvent(
    'ping',
    { partner: partner.slug, workspace: null, external_id: null },
    { message: 'Test event sent by POST /v1/webhook/test.', sent_at: now.toISOString() },
    now,
  );
  const raw = JSON.stringify(event);
  const claim = { token: randomUUID(), leaseUntil: new Date(now.getTime() + deps.worker.leaseMs) };
  const { scheduled } = await storeEvents(deps.pool, [{ raw, columns: readEnvelope(raw) }], now, { claim });
  if (scheduled === 0) throw noWebhookToTest();
  const record = await deps.worker.runClaimed({
    eventId: event.id,
    partnerId: partner.id,
    attemptCount: 0,
    maxAttempts: MAX_ATTEMPTS,
    claimToken: claim.token,
    eventType: event.type,
    body: raw,
    url: webhook.url,
    secretSealed: webhook.secretSealed,
  });
  if (!record) throw noWebhookToTest();
  return record;
}
