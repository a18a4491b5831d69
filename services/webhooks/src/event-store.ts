import { eventEnvelopeSchema } from '@svc/bus';
import type { EventEnvelope } from '@svc/contracts/public';
import { ONE_SNAPSHOT, pageWindow } from '@svc/db';
import type pg from 'pg';
import type { Db } from './db.ts';
import { announcesDeletion } from './deleted-workspaces.ts';
import { MAX_ATTEMPTS } from './delivery/schedule.ts';

/** The columns an event is filtered by, read from its envelope (spec section 6). */
export interface EventColumns {
  id: string;
  type: string;
  partnerSlug: string;
  workspaceId: string | null;
  createdAt: Date;
  /** Stored even when its workspace is deleted (see deleted-workspaces.ts). */
  announcesDeletion: boolean;
}

export class InvalidEventError extends Error {
  override name = 'InvalidEventError';
}

/**
 * Checks that a text is an event envelope (the catalog's schema of spec section 6) and reads its
 * filter columns. The text itself is stored untouched.
 */
export function readEnvelope(raw: string): EventColumns {
  let value: unknown;
  try {
    value = JSON.parse(raw);
  } catch {
    throw new InvalidEventError('not JSON');
  }
  const parsed = eventEnvelopeSchema.safeParse(value);
  if (!parsed.success) throw new InvalidEventError(parsed.error.issues.map((i) => i.message).join('; '));
  return columnsOf(parsed.data);
}

/** The filter columns of a checked envelope. */
export function columnsOf(envelope: EventEnvelope): EventColumns {
  return {
    id: envelope.id,
    type: envelope.type,
    partnerSlug: envelope.partner,
    workspaceId: envelope.workspace,
    createdAt: new Date(envelope.created_at),
    announcesDeletion: announcesDeletion(envelope),
  };
}

export interface IncomingEvent {
  raw: string;
  columns: EventColumns;
}

/**
 * Stores events once each and, for those whose partner has a webhook, schedules the first attempt,
 * in one statement (so one transaction, one commit for the whole batch): an event NATS delivers
 * again finds its id taken and changes nothing. An event of a deleted workspace that arrives after
 * the deletion is not stored (acknowledged, counted as a duplicate), unless it announces the
 * deletion. Returns how many were new and how many scheduled.
 * With `claim`, the deliveries are scheduled already claimed by the caller, who sends the first
 * attempt itself (the test ping).
 */
const STORE = {
  name: 'webhooks_store_events',
  text: `
WITH incoming AS (
  SELECT * FROM unnest($1::text[], $2::text[], $3::text[], $4::text[], $5::timestamptz[], $6::text[],
                       $11::bool[])
           AS i(id, type, partner_slug, workspace_id, created_at, body, announces_deletion)
), kept AS (
  SELECT * FROM incoming i
   WHERE i.announces_deletion OR i.workspace_id IS NULL
      OR NOT EXISTS (SELECT 1 FROM deleted_workspaces dw WHERE dw.workspace_id = i.workspace_id)
), stored AS (
  INSERT INTO events (id, type, partner_slug, workspace_id, created_at, body, stored_at)
  SELECT id, type, partner_slug, workspace_id, created_at, body, $7 FROM kept
  ON CONFLICT (id) DO NOTHING
  RETURNING id, partner_slug
), scheduled AS (
  INSERT INTO deliveries (event_id, partner_id, state, attempt_count, max_attempts, next_attempt_at,
                          claim_token, created_at, updated_at)
  SELECT stored.id, w.partner_id, 'pending', 0, $8, $10, $9, $7, $7
    FROM stored JOIN webhooks w ON w.partner_slug = stored.partner_slug
  RETURNING event_id
)
SELECT (SELECT count(*) FROM stored)::int AS stored, (SELECT count(*) FROM scheduled)::int AS scheduled`,
};

export async function storeEvents(
  db: pg.Pool | pg.PoolClient,
  events: IncomingEvent[],
  now: Date,
  options: { claim?: { token: string; leaseUntil: Date } } = {},
): Promise<{ stored: number; scheduled: number }> {
  // One row per id: the same event twice in a batch is one event.
  const unique = [...new Map(events.map((e) => [e.columns.id, e])).values()];
  const { rows } = await db.query<{ stored: number; scheduled: number }>({
    ...STORE,
    values: [
      unique.map((e) => e.columns.id),
      unique.map((e) => e.columns.type),
      unique.map((e) => e.columns.partnerSlug),
      unique.map((e) => e.columns.workspaceId),
      unique.map((e) => e.columns.createdAt),
      unique.map((e) => e.raw),
      now,
      MAX_ATTEMPTS,
      options.claim?.token ?? null,
      options.claim?.leaseUntil ?? now,
      unique.map((e) => e.columns.announcesDeletion),
    ],
  });
  return { stored: rows[0]?.stored ?? 0, scheduled: rows[0]?.scheduled ?? 0 };
}

export interface EventQuery {
  partnerSlug: string;
  workspaceId?: string | undefined;
  type?: string | undefined;
  since?: Date | undefined;
  page: number;
  limit: number;
}

/**
 * GET /v1/events: the stored bodies, oldest first (created_at, then id for a stable order). The
 * page and its total are read in one snapshot: counted beside the page, the total could include an
 * event stored after the page was read, and a client reading pages until they add up to the total
 * would wait for an event no page holds.
 */
export async function listEvents(db: Db, query: EventQuery): Promise<{ bodies: string[]; total: number }> {
  const where = {
    partnerSlug: query.partnerSlug,
    ...(query.workspaceId !== undefined ? { workspaceId: query.workspaceId } : {}),
    ...(query.type !== undefined ? { type: query.type } : {}),
    ...(query.since !== undefined ? { createdAt: { gt: query.since } } : {}),
  };
  const [events, total] = await db.$transaction(
    [
      db.event.findMany({
        where,
        select: { body: true },
        orderBy: [{ createdAt: 'asc' }, { id: 'asc' }],
        ...pageWindow(query.page, query.limit),
      }),
      db.event.count({ where }),
    ],
    ONE_SNAPSHOT,
  );
  return { bodies: events.map((e) => e.body), total };
}
