import type {
  DeliveryAttempt as AttemptMessage,
  ServiceImplementation,
  WebhooksService,
} from '@svc/contracts';
import type { Keyring } from '@svc/crypto';
import { errors } from '@svc/errors';
import type pg from 'pg';
import type { Clock } from './clock.ts';
import type { Db } from './db.ts';
import { listAttempts, redeliver } from './deliveries.ts';
import type { DeliveryWorker } from './delivery/worker.ts';
import { type AttemptFields, viewOfAttempt, viewOfAttemptPage, viewOfRedelivery } from './delivery-view.ts';
import { listEvents } from './event-store.ts';
import { sendPing } from './ping.ts';
import { deleteWebhook, getWebhook, putWebhook, type UrlPolicy } from './webhook-config.ts';
import { viewOfPutWebhook, viewOfWebhook } from './webhook-view.ts';

type AttemptInit = Omit<AttemptMessage, '$typeName' | '$unknown'>;

function toAttemptMessage(a: AttemptFields): AttemptInit {
  return {
    id: a.id,
    eventId: a.eventId,
    number: a.number,
    url: a.url,
    attemptedAt: a.attemptedAt.toISOString(),
    statusCode: a.statusCode ?? undefined,
    error: a.error ?? '',
    latencyMs: a.latencyMs,
    succeeded: a.succeeded,
  };
}

function parseSince(since: string | undefined): Date | undefined {
  if (since === undefined) return undefined;
  const date = new Date(since);
  if (Number.isNaN(date.getTime())) throw errors.validation('since', 'since must be an ISO-8601 timestamp');
  return date;
}

export function webhooksHandlers(deps: {
  db: Db;
  pool: pg.Pool;
  keyring: Keyring;
  clock: Clock;
  policy: UrlPolicy;
  worker: DeliveryWorker;
}): ServiceImplementation<typeof WebhooksService> {
  const { db, pool, keyring, clock, policy, worker } = deps;
  return {
    async putWebhook(req) {
      const { webhook, secret } = await putWebhook(db, keyring, clock, policy, {
        partnerId: req.partnerId,
        partnerSlug: req.partnerSlug,
        url: req.url,
        rotateSecret: req.rotateSecret,
      });
      return { secret: secret ?? '', webhookJson: JSON.stringify(viewOfPutWebhook(webhook, secret)) };
    },
    async getWebhook(req) {
      return { webhookJson: JSON.stringify(viewOfWebhook(await getWebhook(db, req.partnerId))) };
    },
    async deleteWebhook(req) {
      await deleteWebhook(db, clock, req.partnerId);
      return {};
    },
    async testWebhook(req) {
      const record = await sendPing(
        { db, pool, clock, worker },
        { id: req.partnerId, slug: req.partnerSlug },
      );
      return { attempt: toAttemptMessage(record), attemptJson: JSON.stringify(viewOfAttempt(record)) };
    },
    async listEvents(req) {
      const { bodies, total } = await listEvents(db, {
        partnerSlug: req.partnerSlug,
        workspaceId: req.workspaceId,
        type: req.type,
        since: parseSince(req.since),
        page: req.page,
        limit: req.limit,
      });
      return { eventsJson: bodies, total };
    },
    async listDeliveryAttempts(req) {
      const { attempts, total, delivery } = await listAttempts(db, req.partnerSlug, req.eventId, req);
      const page = viewOfAttemptPage(attempts, { page: req.page, limit: req.limit, total }, delivery);
      return {
        attempts: attempts.map(toAttemptMessage),
        state: delivery?.state ?? '',
        pageJson: JSON.stringify(page),
      };
    },
    async redeliverEvent(req) {
      const { state, nextAttemptAt } = await redeliver(
        db,
        pool,
        { id: req.partnerId, slug: req.partnerSlug },
        req.eventId,
        clock.now(),
      );
      worker.kick();
      return {
        eventId: req.eventId,
        state,
        nextAttemptAt: nextAttemptAt.toISOString(),
        redeliveryJson: JSON.stringify(viewOfRedelivery(req.eventId, state, nextAttemptAt)),
      };
    },
  };
}
