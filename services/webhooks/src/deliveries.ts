import { ONE_SNAPSHOT, pageWindow } from '@svc/db';
import { errors } from '@svc/errors';
import type pg from 'pg';
import type { Db } from './db.ts';

/**
 * GET /v1/events/:id/deliveries: every attempt of one of the partner's events, in order, with the
 * delivery's state, all as of one moment (an attempt recorded meanwhile is in all three or none).
 */
export async function listAttempts(
  db: Db,
  partnerSlug: string,
  eventId: string,
  page: { page: number; limit: number },
) {
  const where = { eventId };
  const [event, attempts, total] = await db.$transaction(
    [
      db.event.findFirst({
        where: { id: eventId, partnerSlug },
        select: { delivery: { select: { state: true, nextAttemptAt: true } } },
      }),
      db.deliveryAttempt.findMany({
        where,
        orderBy: [{ attemptedAt: 'asc' }, { number: 'asc' }],
        ...pageWindow(page.page, page.limit),
      }),
      db.deliveryAttempt.count({ where }),
    ],
    ONE_SNAPSHOT,
  );
  if (!event) throw errors.notFound('event');
  return { attempts, total, delivery: event.delivery };
}

/**
 * POST /v1/events/:id/redeliver: one attempt, due now.
 * - Delivered, undelivered, or never scheduled (no webhook then): a fresh attempt, exactly one
 *   more than were made.
 * - A retry is scheduled (or a first attempt is queued): it is brought forward to now and takes
 *   that retry's place, the schedule unchanged: success ends it, failure goes on to the next
 *   step. A partner who has just fixed a failing endpoint wants the event now, not in 2 hours.
 * - An attempt is in flight (claimed, its lease not run out): refused (409); its outcome decides.
 *   A claim whose lease has run out belongs to a worker that died, so it is taken over.
 */
const REDELIVER = `
INSERT INTO deliveries (event_id, partner_id, state, attempt_count, max_attempts, next_attempt_at, created_at, updated_at)
VALUES ($1, $2, 'pending', 0, 1, $3, $3, $3)
ON CONFLICT (event_id) DO UPDATE
   SET state = 'pending', partner_id = EXCLUDED.partner_id,
       max_attempts = CASE WHEN deliveries.state = 'pending' THEN deliveries.max_attempts
                           ELSE deliveries.attempt_count + 1 END,
       next_attempt_at = EXCLUDED.next_attempt_at, claim_token = NULL, updated_at = EXCLUDED.updated_at
 WHERE deliveries.state <> 'pending' OR deliveries.claim_token IS NULL
    OR deliveries.next_attempt_at <= EXCLUDED.next_attempt_at
RETURNING state, next_attempt_at AS "nextAttemptAt"`;

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
  const { rows } = await pool.query<{ state: string; nextAttemptAt: Date }>(REDELIVER, [
    eventId,
    partner.id,
    now,
  ]);
  const row = rows[0];
  if (!row) throw errors.conflict('an attempt to deliver this event is in flight right now; retry shortly');
  return row;
}
