import type { EventEnvelope } from '@svc/contracts/public';
import type pg from 'pg';
import type { JobSubject } from './catalog.ts';
import { requestColumn } from './trace-headers.ts';

/**
 * The transactional outbox, as every service writes it: the rows go into the service's own
 * `outbox` table (id, subject, payload, request_id; its pool's search_path names the schema) in
 * the same transaction as the change, and the relay publishes them after the commit (see
 * OutboxRelay). The row id becomes the NATS message id, so JetStream drops a second publish.
 */
export interface OutboxRow {
  id: string;
  /** The unprefixed subject; the relay adds the bus's prefix. */
  subject: string;
  payload: unknown;
  /** The request id and trace context of the unit of work that wrote it (see trace-headers.ts). */
  requestId: string | null;
}

/** The row of an event (its subject is its type), carrying the current request id. */
export function eventRow(event: EventEnvelope): OutboxRow {
  return { id: event.id, subject: event.type, payload: event, requestId: requestColumn() };
}

/** The row of a job, keyed by its subject's job key so a relay re-publish is dropped by JetStream. */
export function jobRow<P>(subject: JobSubject<P>, payload: P): OutboxRow {
  return {
    id: `job_${subject.jobKey(payload)}`,
    subject: subject.name,
    payload,
    requestId: requestColumn(),
  };
}

/**
 * The one INSERT of outbox rows, taking them as four arrays (see outboxColumns) from parameter
 * `$first` on. Hot paths embed it in a larger single statement (one round trip, atomic without a
 * transaction block): `from` then names a CTE of that statement, and rows are written only if it
 * produced one. The rows are `o` (`o.id` names each, for a statement that writes only some).
 */
export function outboxInsertSql(first = 1, from?: string): string {
  const [ids, subjects, payloads, requestIds] = [first, first + 1, first + 2, first + 3];
  return `INSERT INTO outbox (id, subject, payload, request_id)
  SELECT o.* FROM ${from ? `${from}, ` : ''}unnest($${ids}::text[], $${subjects}::text[], $${payloads}::jsonb[], $${requestIds}::text[])
         AS o(id, subject, payload, request_id)`;
}

/** Outbox rows as the four parameters outboxInsertSql takes. */
export function outboxColumns(rows: OutboxRow[]): [string[], string[], string[], (string | null)[]] {
  return [
    rows.map((r) => r.id),
    rows.map((r) => r.subject),
    rows.map((r) => JSON.stringify(r.payload)),
    rows.map((r) => r.requestId),
  ];
}

const INSERT_OUTBOX = { name: 'outbox_insert', text: outboxInsertSql() };

/** A transaction to write in: a `pg` client, or a Prisma interactive transaction. */
export type OutboxTransaction =
  | Pick<pg.ClientBase, 'query'>
  | { $executeRawUnsafe(query: string, ...values: unknown[]): PromiseLike<unknown> };

/**
 * Writes the rows in the caller's transaction and answers them: after the commit,
 * `relay.publishCommitted(rows)` sends them at once (else the relay's next pass does).
 */
export async function writeOutbox(tx: OutboxTransaction, rows: OutboxRow[]): Promise<OutboxRow[]> {
  if (rows.length === 0) return rows;
  if ('$executeRawUnsafe' in tx) await tx.$executeRawUnsafe(INSERT_OUTBOX.text, ...outboxColumns(rows));
  else await tx.query({ ...INSERT_OUTBOX, values: outboxColumns(rows) });
  return rows;
}
