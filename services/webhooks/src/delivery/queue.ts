import { type Fields, selectList } from '@svc/db';
import type pg from 'pg';
import type { AttemptFields } from '../delivery-view.ts';

/**
 * The delivery schedule in Postgres: claiming due attempts and recording their outcomes. Raw `pg`
 * with named prepared statements: this is the hot path of every event, run a few thousand times a
 * second under load.
 */
export type Lane = 'first' | 'retry';

export interface ClaimedAttempt {
  eventId: string;
  partnerId: string;
  /** Attempts made before this one. */
  attemptCount: number;
  maxAttempts: number;
  claimToken: string;
  eventType: string;
  body: string;
  /** Null when the partner's webhook was deleted in the meantime. */
  url: string | null;
  secretSealed: string | null;
}

export interface ClaimRequest {
  lane: Lane;
  now: Date;
  /** The claimed attempts are not due again before this: if the worker dies, another takes them then. */
  leaseUntil: Date;
  limit: number;
  /** Attempts this replica has in flight per partner, and the most it may have per partner. */
  inFlight: ReadonlyMap<string, number>;
  perEndpointLimit: number;
  claimToken: string;
}

const CLAIMED_FIELDS: Fields<ClaimedAttempt> = {
  eventId: 'd.event_id',
  partnerId: 'd.partner_id',
  attemptCount: 'd.attempt_count',
  maxAttempts: 'd.max_attempts',
  claimToken: 'd.claim_token',
  eventType: 'e.type',
  body: 'e.body',
  url: 'w.url',
  secretSealed: 'w.secret_sealed',
};

// The lanes differ only in their predicate, which matches one partial index each (see migration).
const LANE_PREDICATE: Record<Lane, string> = {
  first: 'd.attempt_count = 0',
  retry: 'd.attempt_count > 0',
};

/**
 * One statement: lock due rows with SKIP LOCKED (replicas never take the same row), skip partners
 * already at their limit, keep at most the free slots of each remaining partner (so one partner's
 * backlog cannot fill the batch), lease the chosen rows, and return what the attempt needs.
 * The candidate window is wider than the batch so a large backlog of one partner does not hide
 * the others; a partner at its limit is left out of the window altogether.
 */
function claimStatement(lane: Lane) {
  return {
    name: `webhooks_claim_${lane}`,
    text: `
WITH busy AS (
  SELECT * FROM unnest($4::text[], $5::int[]) AS b(partner_id, in_flight)
), candidates AS (
  SELECT d.event_id, d.partner_id, d.next_attempt_at
    FROM deliveries d
   WHERE d.state = 'pending' AND ${LANE_PREDICATE[lane]} AND d.next_attempt_at <= $1
     AND d.partner_id <> ALL($6::text[])
   ORDER BY d.next_attempt_at
   LIMIT $7
   FOR UPDATE SKIP LOCKED
), chosen AS (
  SELECT ranked.event_id, ranked.partner_id
    FROM (SELECT c.*, row_number() OVER (PARTITION BY c.partner_id ORDER BY c.next_attempt_at) AS rank
            FROM candidates c) ranked
    LEFT JOIN busy ON busy.partner_id = ranked.partner_id
   WHERE ranked.rank <= $8 - coalesce(busy.in_flight, 0)
   ORDER BY ranked.next_attempt_at
   LIMIT $3
)
UPDATE deliveries d
   SET next_attempt_at = $2, claim_token = $9, updated_at = $1
  FROM chosen
  JOIN events e ON e.id = chosen.event_id
  LEFT JOIN webhooks w ON w.partner_id = chosen.partner_id
 WHERE d.event_id = chosen.event_id
RETURNING ${selectList(CLAIMED_FIELDS)}`,
  };
}

const CLAIM = { first: claimStatement('first'), retry: claimStatement('retry') };

export async function claimDue(pool: pg.Pool, request: ClaimRequest): Promise<ClaimedAttempt[]> {
  const saturated = [...request.inFlight]
    .filter(([, count]) => count >= request.perEndpointLimit)
    .map(([partner]) => partner);
  const { rows } = await pool.query<ClaimedAttempt>({
    ...CLAIM[request.lane],
    values: [
      request.now,
      request.leaseUntil,
      request.limit,
      [...request.inFlight.keys()],
      [...request.inFlight.values()],
      saturated,
      Math.min(request.limit * 4, 2_000),
      request.perEndpointLimit,
      request.claimToken,
    ],
  });
  return rows;
}

export interface AttemptRecord extends AttemptFields {
  claimToken: string;
  /** The schedule's next step: delivered, another attempt at `nextAttemptAt`, or undelivered. */
  state: 'delivered' | 'pending' | 'undelivered';
  nextAttemptAt: Date | null;
  now: Date;
}

/**
 * Records attempts and moves their schedules, in one statement for a whole batch. Every attempt
 * row is written (it happened) while its event is stored; a schedule moves only if the same claim
 * still holds it, so a worker whose lease ran out cannot overwrite the outcome of the one that
 * took over. An event purged while its attempt was in flight (its workspace was deleted) keeps
 * nothing: the key-share lock waits for a purge in progress and then finds the event gone, where
 * the foreign key would have failed the whole batch.
 */
const RECORD = {
  name: 'webhooks_record_attempts',
  text: `
WITH outcome AS (
  SELECT * FROM unnest($1::text[], $2::text[], $3::int[], $4::text[], $5::timestamptz[], $6::int[],
                       $7::text[], $8::int[], $9::bool[], $10::text[], $11::timestamptz[], $12::text[],
                       $13::timestamptz[])
    AS o(id, event_id, number, url, attempted_at, status_code, error, latency_ms, succeeded, state,
         next_attempt_at, claim_token, now)
), attempt AS (
  INSERT INTO delivery_attempts (id, event_id, number, url, attempted_at, status_code, error, latency_ms, succeeded)
  SELECT id, event_id, number, url, attempted_at, status_code, error, latency_ms, succeeded FROM outcome o
   WHERE EXISTS (SELECT 1 FROM events e WHERE e.id = o.event_id FOR KEY SHARE)
)
UPDATE deliveries d
   SET attempt_count = d.attempt_count + 1, state = o.state, next_attempt_at = o.next_attempt_at,
       claim_token = NULL, updated_at = o.now
  FROM outcome o
 WHERE d.event_id = o.event_id AND d.claim_token = o.claim_token`,
};

export async function recordAttempts(pool: pg.Pool, records: AttemptRecord[]): Promise<void> {
  const column = <T>(pick: (r: AttemptRecord) => T) => records.map(pick);
  await pool.query({
    ...RECORD,
    values: [
      column((r) => r.id),
      column((r) => r.eventId),
      column((r) => r.number),
      column((r) => r.url),
      column((r) => r.attemptedAt),
      column((r) => r.statusCode),
      column((r) => r.error),
      column((r) => r.latencyMs),
      column((r) => r.succeeded),
      column((r) => r.state),
      column((r) => r.nextAttemptAt),
      column((r) => r.claimToken),
      column((r) => r.now),
    ],
  });
}

/** A claimed delivery whose webhook is gone: nothing to send it to, so it ends undelivered. */
export async function abandonClaim(pool: pg.Pool, eventId: string, claimToken: string, now: Date) {
  await pool.query(
    `UPDATE deliveries SET state = 'undelivered', next_attempt_at = NULL, claim_token = NULL, updated_at = $3
      WHERE event_id = $1 AND claim_token = $2`,
    [eventId, claimToken, now],
  );
}
