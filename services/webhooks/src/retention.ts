import type pg from 'pg';
import { RETRY_HORIZON_MS } from './delivery/schedule.ts';

const DAY_MS = 86_400_000;

/**
 * Deletes events (with their schedule and attempts) stored longer ago than the retry horizon plus
 * the catch-up window, never one still pending delivery. Batches are taken with SKIP LOCKED and
 * deleting twice is harmless, so every replica may run it at the same time.
 */
export async function purgeExpiredEvents(
  pool: pg.Pool,
  now: Date,
  retentionDays: number,
  batchSize = 1_000,
): Promise<number> {
  const cutoff = new Date(now.getTime() - RETRY_HORIZON_MS - retentionDays * DAY_MS);
  let purged = 0;
  for (;;) {
    const { rowCount } = await pool.query(
      `DELETE FROM events WHERE id IN (
         SELECT e.id FROM events e
          WHERE e.stored_at < $1
            AND NOT EXISTS (SELECT 1 FROM deliveries d WHERE d.event_id = e.id AND d.state = 'pending')
          ORDER BY e.stored_at
          LIMIT $2
          FOR UPDATE SKIP LOCKED)`,
      [cutoff, batchSize],
    );
    purged += rowCount ?? 0;
    if ((rowCount ?? 0) < batchSize) return purged;
  }
}
