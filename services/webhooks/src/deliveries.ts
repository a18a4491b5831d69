import { pageWindow } from '@svc/db';
import { errors } from '@svc/errors';
import type pg from 'pg';
import type { Db } from './db.ts';

/** GET /v1/events/:id/deliveries: every attempt of one of the partner's events, in order. */
export async function listAttempts(
  db: Db,
  partnerSlug: string,
  eventId: string,
  page: { page: number; limit: number },
) {
  const event = await db.event.findFirst({
    where: { id: eventId, partnerSlug },
    select: { delivery: { select: { state: true, nextAttemptAt: true } } },
  });
  if (!event) throw errors.notFound('event');
  const where = { eventId };
  const [attempts, total] = await Promise.all([
    db.deliveryAttempt.findMany({
      where,
      orderBy: [{ attemptedAt: 'asc' }, { number: 'asc' }],
      ...pageWindow(page.page, page.limit),
    }),
    db.deliveryAttempt.count({ where }),
  ]);
  return { attempts, total, delivery: event.delivery };
}

/**
 * POST /v1/events/:id/redeliver: queues one fresh attempt, due now, for an event that is not
 * pending (delivered, undelivered, or never scheduled because no webhook was set then). It allows
 * exactly one attempt more than were made; a pending delivery is left alone (409).
 */
const REDELIVER = `
INSERT INTO deliveries (event_id, partner_id, state, attempt_count, max_attempts, next_attempt_at, created_at, updated_at)
VALUES ($1, $2, 'pending', 0, 1, $3, $3, $3)
ON CONFLICT (event_id) DO UPDATE
   SET state = 'pending', partner_id = EXCLUDED.partner_id, max_attempts = deliveries.attempt_count + 1,
       next_attempt_at = EXCLUDED.next_attempt_at, claim_token = NULL, updated_at = EXCLUDED.updated_at
 WHERE deliveries.state <> 'pending'
RETURNING state, next_attempt_at`;

export async function redeliver(
  db: Db,
  pool: pg.Pool,
  partner: { id: string; slug: string },
  eventId: string,
  now: Date,
): Promise<{ state: string; nextAttemptAt: Date }> {
  const event = await db.event.findFirst({ where: { id: eventId, partnerSlug: partner.slug } });
  if (!event) throw errors.notFound('event');
  if (!(await db.webhook.findUnique({ where: { partnerId: partner.id } })))
    throw errors.conflict('no webhook is configured: set one with PUT /v1/webhook first');
  const { rows } = await pool.query<{ state: string; next_attempt_at: Date }>(REDELIVER, [
    eventId,
    partner.id,
    now,
  ]);
  const row = rows[0];
  if (!row) throw errors.conflict('a delivery of this event is already pending');
  return { state: row.state, nextAttemptAt: row.next_attempt_at };
}
