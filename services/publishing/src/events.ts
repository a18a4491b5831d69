import { type EventEnvelope, outboxRowFor, SIGNALS } from '@svc/bus';
import { currentRequestId } from '@svc/logging';
import type pg from 'pg';

/** A row of the outbox table; the relay publishes it on NATS after the commit. */
export interface OutboxInsert {
  id: string;
  subject: string;
  payload: unknown;
  requestId: string | null;
}

/** The outbox row of an event, carrying the current request id. */
export const eventRow = (event: EventEnvelope): OutboxInsert => outboxRowFor(event, currentRequestId());

/** One publish job per target, keyed by attempt so a relay re-publish is dropped by JetStream. */
export const publishJobRow = (postId: string, accountId: string, attempt: number): OutboxInsert => ({
  id: `job_${postId}_${accountId}_${attempt}`,
  subject: SIGNALS.publishTarget,
  payload: { post_id: postId, account_id: accountId, attempt },
  requestId: currentRequestId() ?? null,
});

const INSERT_OUTBOX = {
  name: 'publishing_insert_outbox',
  text: `INSERT INTO outbox (id, subject, payload, request_id)
         SELECT * FROM unnest($1::text[], $2::text[], $3::jsonb[], $4::text[])`,
};

/** Outbox rows as the four columns `INSERT ... SELECT * FROM unnest(...)` takes. */
export function outboxColumns(rows: OutboxInsert[]): [string[], string[], string[], (string | null)[]] {
  return [
    rows.map((r) => r.id),
    rows.map((r) => r.subject),
    rows.map((r) => JSON.stringify(r.payload)),
    rows.map((r) => r.requestId),
  ];
}

/** Writes events and jobs in the caller's transaction and answers the rows written. */
export async function writeOutbox(
  tx: pg.PoolClient,
  items: { events?: EventEnvelope[]; jobs?: OutboxInsert[] },
): Promise<OutboxInsert[]> {
  const rows = [...(items.events ?? []).map(eventRow), ...(items.jobs ?? [])];
  if (rows.length > 0) await tx.query({ ...INSERT_OUTBOX, values: outboxColumns(rows) });
  return rows;
}
