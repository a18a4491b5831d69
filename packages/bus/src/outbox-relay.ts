import { GroupCommit, transaction } from '@svc/db';
import type { Logger } from '@svc/logging';
import type pg from 'pg';
import type { Bus } from './connection.ts';
import type { OutboxRow } from './outbox.ts';
import { publishWithRequestColumn } from './trace-headers.ts';

/**
 * How long published rows wait to be deleted together with the rows of other commits. Nobody
 * waits on the delete (the rows are out already), and a relay pass comes at most every second.
 */
const DELETE_BATCH_MS = 50;

/**
 * Rows younger than this are left out of the relay's periodic pass: the service that committed
 * them is publishing them itself (publishCommitted), and a pass taking them too would send them
 * twice and wait on the committer's delete. A kicked pass (after a commit, or after a direct
 * publish failed) takes every row.
 */
const DIRECT_PUBLISH_GRACE_MS = 2_000;

/**
 * Claims and deletes one batch of rows: `$1` rows at most, at least `$2` seconds old (0: any). The
 * claimed ids go to the delete as an array, found by primary key: as `id IN (subquery)`, the plan
 * kept for a batch of unknown size joined them against a scan of the whole outbox, so draining a
 * backlog (after a NATS outage) cost its size squared (7 ms a batch at 20,000 rows waiting, 0.4 ms
 * this way). Named per schema, since a statement name lives on the connection.
 */
export function claimStatement(schema: string): { name: string; text: string } {
  return {
    name: `outbox_claim_${schema}`,
    text: `DELETE FROM "${schema}".outbox
            WHERE id = ANY(ARRAY(SELECT id FROM "${schema}".outbox
                          WHERE $2 = 0 OR created_at <= clock_timestamp() - make_interval(secs => $2)
                          ORDER BY created_at, id LIMIT $1 FOR UPDATE SKIP LOCKED))
        RETURNING id, subject, payload, request_id AS "requestId"`,
  };
}

/**
 * Publishes what services commit to their outbox (see outbox.ts): claims rows with FOR UPDATE SKIP
 * LOCKED (safe with N replicas), publishes each with `Nats-Msg-Id` = the row id (so JetStream drops
 * a re-publish after a crash), and deletes them in the same transaction. If NATS is down the
 * transaction rolls back and the rows wait: nothing is lost, nothing is emitted for a rolled-back
 * change. A row is deleted once out rather than marked: a mark was an update of an indexed column
 * (a new row version and an entry in each index), and nothing reads a published row again.
 */
export class OutboxRelay {
  private timer: NodeJS.Timeout | undefined;
  private running: Promise<void> | undefined;
  /** The youngest rows a pass was asked for while one ran: another pass follows it. */
  private pending: number | undefined;
  private stopped = false;
  private readonly deletes = new GroupCommit<string>((ids) => this.deletePublished(ids), {
    gatherMs: DELETE_BATCH_MS,
  });

  constructor(
    private readonly pool: pg.Pool,
    private readonly bus: Bus,
    private readonly logger: Logger,
    private readonly options: {
      schema: string;
      batchSize?: number;
      pollMs?: number;
    },
  ) {}

  start(): void {
    const tick = () => {
      if (this.stopped) return;
      this.pass(DIRECT_PUBLISH_GRACE_MS);
      this.timer = setTimeout(tick, this.options.pollMs ?? 1000);
    };
    tick();
  }

  /** Ask for a relay pass now (called after a commit that wrote events). */
  kick(): void {
    this.pass(0);
  }

  /** A pass over the rows at least `minAgeMs` old, or another right after the one running. */
  private pass(minAgeMs: number): void {
    if (this.running) {
      this.pending = Math.min(this.pending ?? minAgeMs, minAgeMs);
      return;
    }
    this.running = this.drain(minAgeMs).finally(() => {
      this.running = undefined;
      const next = this.pending;
      this.pending = undefined;
      if (next !== undefined && !this.stopped) this.pass(next);
    });
  }

  /**
   * Publishes rows the caller has just committed without waiting for a relay pass (one claim
   * round trip less between a commit and its event), then deletes them. A crash or a NATS failure
   * in between leaves them for the next pass; a row sent by both is dropped by JetStream
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
    await this.deleteSoon(rows.map((row) => row.id));
  }

  /**
   * Deletes published rows, the rows of every commit published within the same few milliseconds
   * in one statement (under load, one statement per commit was a good part of a service's
   * statements). Resolves once its rows are gone, or left for the relay (a failed delete only
   * re-sends them).
   */
  private deleteSoon(ids: string[]): Promise<void> {
    return this.deletes.addAll(ids);
  }

  private async deletePublished(ids: string[]): Promise<void> {
    const { schema } = this.options;
    await this.pool
      .query({
        name: `outbox_delete_${schema}`,
        text: `DELETE FROM "${schema}".outbox WHERE id = ANY($1)`,
        values: [ids],
      })
      .catch((error: unknown) =>
        this.logger.warn({ err: error }, 'deleting published outbox rows failed; the relay re-sends them'),
      );
  }

  async stop(): Promise<void> {
    this.stopped = true;
    clearTimeout(this.timer);
    await this.running;
    await this.deletes.idle();
  }

  private async drain(minAgeMs: number): Promise<void> {
    try {
      while ((await this.relayBatch(minAgeMs)) === (this.options.batchSize ?? 100)) {}
    } catch (error) {
      this.logger.warn({ err: error }, 'outbox relay pass failed; will retry');
    }
  }

  /**
   * Publishes one batch of the rows at least `minAgeMs` old, oldest first; returns how many rows it
   * published. The rows are claimed and deleted in one statement; if a publish fails the
   * transaction rolls back and they wait for the next pass. (The age is measured on the clock, not
   * `now()`, so a row committed after this transaction began is taken as well; and 0 takes every
   * row, `created_at` being stored to the millisecond, rounded, possibly ahead of the clock.)
   * The statement is named, so each connection plans it once (see claimStatement).
   */
  async relayBatch(minAgeMs = 0): Promise<number> {
    const { schema, batchSize = 100 } = this.options;
    return transaction(this.pool, async (client) => {
      const { rows } = await client.query<{
        id: string;
        subject: string;
        payload: unknown;
        requestId: string | null;
      }>({
        ...claimStatement(schema),
        values: [batchSize, minAgeMs / 1000],
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
      `SELECT count(*) FROM "${this.options.schema}".outbox`,
    );
    return Number(rows[0]?.count ?? 0);
  }
}
