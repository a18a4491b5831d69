import type { WorkspaceSignal } from '@svc/bus';
import type { EventEnvelope } from '@svc/contracts/public';
import type pg from 'pg';
import { RETRY_HORIZON_MS } from './delivery/schedule.ts';

const HOUR_MS = 3_600_000;
const DAY_MS = 24 * HOUR_MS;

/**
 * How long the events announcing a deletion stay listed by `GET /v1/events` after it, for partners
 * who poll rather than receive webhooks; one still being delivered stays until its schedule ends.
 */
export const DELETION_GRACE_MS = 24 * HOUR_MS;

/**
 * Whether an event announces the deletion of its workspace (`account.disconnected` with reason
 * `workspace_deleted`, one per account the deletion disconnected): the partner must still learn
 * of it, so it is stored, delivered and listed after the deletion, for the grace period.
 */
export const announcesDeletion = (envelope: EventEnvelope): boolean =>
  (envelope.data as { reason?: unknown }).reason === 'workspace_deleted';

/** `announcesDeletion` over a stored event `e` (its body is the envelope's JSON text). */
const ANNOUNCES_DELETION = `coalesce((e.body::jsonb #>> '{data,reason}') = 'workspace_deleted', false)`;

/**
 * The events of deleted workspaces that may go now: every one that does not announce the
 * deletion, and those that do once the grace period is over and no delivery of theirs is pending.
 * Deliveries and attempts go with them (cascade). SKIP LOCKED: a row another replica is deleting,
 * or an attempt is recording, is left to the next pass.
 */
const PURGE = `
DELETE FROM events WHERE id IN (
  SELECT e.id FROM deleted_workspaces dw
    JOIN events e ON e.partner_slug = dw.partner_slug AND e.workspace_id = dw.workspace_id
   WHERE ($1::text IS NULL OR dw.workspace_id = $1)
     AND (NOT ${ANNOUNCES_DELETION}
          OR (dw.deleted_at < $2
              AND NOT EXISTS (SELECT 1 FROM deliveries d WHERE d.event_id = e.id AND d.state = 'pending')))
   LIMIT $3
   FOR UPDATE OF e SKIP LOCKED)`;

/**
 * `workspace.deleted`: the workspace is remembered as deleted (so its late events are not stored,
 * see event-store.ts) and its events go at once, except those announcing the deletion. Whatever
 * was waiting for delivery is not sent; an attempt already in flight finishes its send, and its
 * outcome finds nothing to record. Safe to repeat: a second run finds nothing left.
 */
export async function forgetWorkspace(pool: pg.Pool, signal: WorkspaceSignal, now: Date): Promise<number> {
  await pool.query(
    `INSERT INTO deleted_workspaces (workspace_id, partner_slug, deleted_at) VALUES ($1, $2, $3)
     ON CONFLICT (workspace_id) DO NOTHING`,
    [signal.workspace, signal.partner, now],
  );
  return purgeDeletedWorkspaces(pool, now, { workspaceId: signal.workspace });
}

/**
 * The periodic pass over every deleted workspace: the events announcing a deletion whose grace
 * period is over (and delivery settled), anything stored in a race with the deletion, and, past
 * the event retention, the deleted workspace's own row. Several replicas may run it at once.
 */
export async function purgeDeletedWorkspaces(
  pool: pg.Pool,
  now: Date,
  options: { workspaceId?: string; retentionDays?: number; batchSize?: number } = {},
): Promise<number> {
  const graceOver = new Date(now.getTime() - DELETION_GRACE_MS);
  const batchSize = options.batchSize ?? 1_000;
  let purged = 0;
  for (;;) {
    const { rowCount } = await pool.query(PURGE, [options.workspaceId ?? null, graceOver, batchSize]);
    purged += rowCount ?? 0;
    if ((rowCount ?? 0) < batchSize) break;
  }
  if (options.retentionDays !== undefined) {
    const forgotten = new Date(now.getTime() - RETRY_HORIZON_MS - options.retentionDays * DAY_MS);
    await pool.query('DELETE FROM deleted_workspaces WHERE deleted_at < $1', [forgotten]);
  }
  return purged;
}
