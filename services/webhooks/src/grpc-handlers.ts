import type {
  DeliveryAttempt as AttemptMessage,
  ServiceImplementation,
  Webhook as WebhookMessage,
  WebhooksService,
} from '@svc/contracts';
import type { Keyring } from '@svc/crypto';
import { errors } from '@svc/errors';
import type pg from 'pg';
import type { Clock } from './clock.ts';
import type { Db } from './db.ts';
import { listAttempts, redeliver } from './deliveries.ts';
import type { DeliveryWorker } from './delivery/worker.ts';
import { listEvents } from './event-store.ts';
import type { Webhook } from './generated/prisma/client.ts';
import { sendPing } from './ping.ts';
import { deleteWebhook, getWebhook, putWebhook, type UrlPolicy } from './webhook-config.ts';

type WebhookInit = Omit<WebhookMessage, '$typeName' | '$unknown'>;
type AttemptInit = Omit<AttemptMessage, '$typeName' | '$unknown'>;

function toWebhookMessage(w: Webhook): WebhookInit {
  return { url: w.url, createdAt: w.createdAt.toISOString(), updatedAt: w.updatedAt.toISOString() };
}

interface AttemptFields {
  id: string;
  eventId: string;
  number: number;
  url: string;
  attemptedAt: Date;
  statusCode: number | null;
  error: string | null;
  latencyMs: number;
  succeeded: boolean;
}

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
      return { webhook: toWebhookMessage(webhook), secret: secret ?? '' };
    },
    async getWebhook(req) {
      return { webhook: toWebhookMessage(await getWebhook(db, req.partnerId)) };
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
      return { attempt: toAttemptMessage(record) };
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
      return {
        attempts: attempts.map(toAttemptMessage),
        total,
        state: delivery?.state ?? '',
        nextAttemptAt: delivery?.nextAttemptAt?.toISOString() ?? '',
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
      return { eventId: req.eventId, state, nextAttemptAt: nextAttemptAt.toISOString() };
    },
  };
}
