import type { RequestLogEntry } from '@svc/contracts';
import type { Db } from './db.ts';

/** Stores a batch of request logs sent by a gateway (key id, route, status, timing; never bodies). */
export async function recordRequests(db: Db, entries: RequestLogEntry[]): Promise<void> {
  if (entries.length === 0) return;
  await db.requestLog.createMany({
    data: entries.map((e) => ({
      keyId: e.keyId || null,
      method: e.method,
      route: e.route,
      status: e.status,
      durationMs: e.durationMs,
      requestId: e.requestId,
      createdAt: new Date(e.at),
    })),
  });
}

/** Deletes logs past retention; idempotent, so every replica may run it. */
export async function purgeRequestLogs(db: Db, retentionDays: number, now = new Date()): Promise<number> {
  const cutoff = new Date(now.getTime() - retentionDays * 86_400_000);
  const { count } = await db.requestLog.deleteMany({ where: { createdAt: { lt: cutoff } } });
  return count;
}
