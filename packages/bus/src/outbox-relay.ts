import { GroupCommit, transaction } from '@svc/db';
import type { Logger } from '@svc/logging';
import type pg from 'pg';
import type { Bus } from './connection.ts';
import type { OutboxRow } from './outbox.ts';
import { publishWithRequestColumn } from './trace-headers.ts';

/**
 * How long published rows wait to be marked together with the rows of other commits. Nobody waits
 * on a mark (the rows are out already), and a relay pass comes at most every second.
 */
const MARK_BATCH_MS = 50;

/**
 * Publishes what services commit to their outbox (see outbox.ts): claims unpublished rows with
 * FOR UPDATE SKIP LOCKED (safe with N replicas), publishes each with `Nats-Msg-Id` = the row id (so
 * JetStream drops a re-publish after a crash), and marks them published in the same transaction.
 * If NATS is down the transaction rolls back and the rows wait: nothing is lost, nothing is
 * emitted for a rolled-back change.
 */
export class OutboxRelay {
  private timer: NodeJS.Timeout | undefined;
  private running: Promise<void> | undefined;
  private again = false;
  private stopped = false;
  private readonly marks = new GroupCommit<string>((ids) => this.markPublished(ids), {
    gatherMs: MARK_BATCH_MS,
  });

  constructor(
    private readonly pool: pg.Pool,
    private readonly bus: Bus,
    private readonly logger: Logger,
    private readonly options: {
      schema: string;
      batchSize?: number;
      pollMs?: number;
      retentionHours?: number;
    },
  ) {}

  start(): void {
    const tick = () => {
      if (this.stopped) return;
      this.kick();
      this.timer = setTimeout(tick, this.options.pollMs ?? 1000);
    };
    tick();
  }

  /** Ask for a relay pass now (called after a commit that wrote events). */
  kick(): void {
    if (this.running) {
      this.again = true;
      return;
    }
    this.running = this.drain().finally(() => {
      this.running = undefined;
      if (this.again && !this.stopped) {
        this.again = false;
        this.kick();
      }
    });
  }

  /**
   * Publishes rows the caller has just committed without waiting for a relay pass (one claim
   * round trip less between a commit and its event), then marks them. A crash or a NATS failure
   * in between leaves them unmarked for the next pass; a row sent by both is dropped by JetStream
   * (same Nats-Msg-Id within the stream's duplicate window). Never throws: the pass is the fallback.
   */
  async publishCommitted(rows: OutboxRow[]): Promise<void> {
    if (rows.length === 0) return;
    try {
      await Promise.all(rows.map((row) => this.publish(row.id, row.subject, row.payload, row.requestId)));
    } catch (error) {
      this.logger.warn({ err: error }, 'publishing committed outbox rows failed; the relay will retry');
      this.kick();
      return;
    }
    await this.markSoon(rows.map((row) => row.id));
  }

  /**
   * Marks published rows, the rows of every commit published within the same few milliseconds in
   * one UPDATE (under load, one statement per commit was a good part of a service's statements).
   * Resolves once its rows are marked, or left for the relay (a failed mark only re-sends them).
   */
  private markSoon(ids: string[]): Promise<void> {
    return this.marks.addAll(ids);
  }

  private async markPublished(ids: string[]): Promise<void> {
    const { schema } = this.options;
    await this.pool
      .query({
        name: `outbox_mark_${schema}`,
        // By primary key only: a condition on published_at would let the planner walk the
        // (published_at, created_at) index through every row marked since the last vacuum.
        text: `UPDATE "${schema}".outbox SET published_at = coalesce(published_at, now()) WHERE id = ANY($1)`,
        values: [ids],
      })
      .catch((error: unknown) =>
        this.logger.warn({ err: error }, 'marking published outbox rows failed; the relay re-sends them'),
      );
  }

  async stop(): Promise<void> {
    this.stopped = true;
    clearTimeout(this.timer);
    await this.running;
    await this.marks.idle();
  }

  private async drain(): Promise<void> {
    try {
      while ((await this.relayBatch()) === (this.options.batchSize ?? 100)) {}
    } catch (error) {
      this.logger.warn({ err: error }, 'outbox relay pass failed; will retry');
    }
  }

  /**
   * Publishes one batch; returns how many rows it published. The rows are claimed and marked in
   * one statement; if a publish fails the transaction rolls back and they wait for the next pass.
   * Named statements (per schema, since a statement name lives on the connection) skip re-planning.
   */
  async relayBatch(): Promise<number> {
    const { schema, batchSize = 100 } = this.options;
    return transaction(this.pool, async (client) => {
      const { rows } = await client.query<{
        id: string;
        subject: string;
        payload: unknown;
        requestId: string | null;
      }>({
        name: `outbox_claim_${schema}`,
        text: `UPDATE "${schema}".outbox SET published_at = now()
                WHERE id IN (SELECT id FROM "${schema}".outbox WHERE published_at IS NULL
                              ORDER BY created_at, id LIMIT $1 FOR UPDATE SKIP LOCKED)
            RETURNING id, subject, payload, request_id AS "requestId"`,
        values: [batchSize],
      });
      await Promise.all(rows.map((row) => this.publish(row.id, row.subject, row.payload, row.requestId)));
      return rows.length;
    });
  }

  private async publish(id: string, subject: string, payload: unknown, requestColumn: string | null) {
    await publishWithRequestColumn(requestColumn, subject, (h) =>
      this.bus.js.publish(this.bus.subjects.subject(subject), JSON.stringify(payload), {
        msgID: id,
        headers: h,
      }),
    );
  }

  /** Rows committed and not yet published (a metric: the relay keeps up when it stays small). */
  async backlog(): Promise<number> {
    const { rows } = await this.pool.query<{ count: string }>(
      `SELECT count(*) FROM "${this.options.schema}".outbox WHERE published_at IS NULL`,
    );
    return Number(rows[0]?.count ?? 0);
  }

  /** Deletes published rows past retention; idempotent, so any replica may run it. */
  async purgePublished(): Promise<number> {
    const hours = this.options.retentionHours ?? 24;
    const result = await this.pool.query(
      `DELETE FROM "${this.options.schema}".outbox WHERE published_at < now() - make_interval(hours => $1)`,
      [hours],
    );
    return result.rowCount ?? 0;
  }
}
