import type { RequestLogEntry } from '@svc/contracts';
import type pg from 'pg';
import type { Db } from './db.ts';

/**
 * Stores a batch of request logs sent by a gateway (key id, route, status, timing; never bodies).
 * One INSERT from arrays on the pool: batches arrive every second under load, and building a
 * large Prisma createMany each time cost visible CPU on the request path's process.
 */
export async function recordRequests(pool: pg.Pool, entries: RequestLogEntry[]): Promise<void> {
  if (entries.length === 0) return;
  await pool.query(
    `INSERT INTO request_logs (key_id, method, route, status, duration_ms, request_id, created_at)
     SELECT NULLIF(k, ''), m, r, s, d, q, a
       FROM unnest($1::text[], $2::text[], $3::text[], $4::int[], $5::int[], $6::text[], $7::timestamptz[])
         AS t(k, m, r, s, d, q, a)`,
    [
      entries.map((e) => e.keyId),
      entries.map((e) => e.method),
      entries.map((e) => e.route),
      entries.map((e) => e.status),
      entries.map((e) => e.durationMs),
      entries.map((e) => e.requestId),
      entries.map((e) => e.at),
    ],
  );
}

/** Deletes logs past retention; idempotent, so every replica may run it. */
export async function purgeRequestLogs(db: Db, retentionDays: number, now = new Date()): Promise<number> {
  const cutoff = new Date(now.getTime() - retentionDays * 86_400_000);
  const { count } = await db.requestLog.deleteMany({ where: { createdAt: { lt: cutoff } } });
  return count;
}
