import type { KnownAccount } from '@svc/directory';
import type pg from 'pg';

/** An account whose webhook was dropped, and the network time of the oldest item it lost. */
interface MissedWebhook {
  account: ImportedAccount;
  at: Date;
}

type ImportedAccount = Pick<KnownAccount, 'id' | 'workspaceId'>;

/**
 * A webhook's time for an item is not always the time its network history gives it (a comment's
 * webhook may carry its entry's time, which comes after it): when the first drop draws the line
 * between history and news, it is drawn this much earlier, so that the item is news.
 */
const MISSED_SLACK_SECONDS = 60;

/**
 * What the history import knows of each account (table `account_imports`): when it first ran,
 * which splits what it finds into history (older: stored without events) and news (newer: it
 * arrived while the account was not active and its webhooks were dropped, so it is announced);
 * and whether webhooks were dropped since the last import, which is what makes an account's
 * return to active without a reconnect (from error) worth an import. Its rows are also the list of
 * accounts the reconciliation sweeps (every imported account), each claimed when due.
 */
export class AccountImports {
  constructor(
    private readonly pool: pg.Pool,
    /** How often each account is reconciled (INBOX_RECONCILE_INTERVAL_MS). */
    private readonly sweepIntervalMs: number,
  ) {}

  /**
   * Starts an import: the time before which messages are history. The first import sets it to
   * now, unless webhooks of the account were already dropped (it connected in error): then what
   * they lost is news. The first import also places the account's first reconciliation at a
   * random point of the interval, so that accounts connected together are not swept together.
   */
  async begin(account: ImportedAccount, now: Date): Promise<Date> {
    const { rows } = await this.pool.query<{ historyBefore: Date }>(
      `INSERT INTO account_imports AS a (account_id, workspace_id, history_before, next_sweep_at)
       VALUES ($1, $2, $3, $3::timestamptz + make_interval(secs => $5 * random()))
       ON CONFLICT (account_id) DO UPDATE
         SET history_before = COALESCE(
               a.history_before,
               LEAST(a.missed_since - make_interval(secs => $4), EXCLUDED.history_before)),
             next_sweep_at = COALESCE(a.next_sweep_at, EXCLUDED.next_sweep_at)
       RETURNING history_before AS "historyBefore"`,
      [account.id, account.workspaceId, now, MISSED_SLACK_SECONDS, this.sweepIntervalMs / 1000],
    );
    return rows[0]?.historyBefore ?? now;
  }

  /** An import that started at `startedAt` read everything dropped before it. */
  async settle(accountId: string, startedAt: Date): Promise<void> {
    await this.pool.query(
      `UPDATE account_imports SET missed_since = NULL WHERE account_id = $1 AND missed_since <= $2`,
      [accountId, startedAt],
    );
  }

  /** Webhooks dropped: the first drop since the last import is kept (later ones write nothing). */
  async markMissed(missed: MissedWebhook[]): Promise<void> {
    if (missed.length === 0) return;
    await this.pool.query(
      `INSERT INTO account_imports AS a (account_id, workspace_id, missed_since)
       SELECT id, min(w), min(at) FROM unnest($1::text[], $2::text[], $3::timestamptz[]) AS m(id, w, at)
       GROUP BY id
       ON CONFLICT (account_id) DO UPDATE SET missed_since = EXCLUDED.missed_since
       WHERE a.missed_since IS NULL`,
      [missed.map((m) => m.account.id), missed.map((m) => m.account.workspaceId), missed.map((m) => m.at)],
    );
  }

  /**
   * Whether an import is due: the account was never imported (it connected in error), or some of
   * its webhooks were dropped since its last import.
   */
  async due(accountId: string): Promise<boolean> {
    const { rows } = await this.pool.query(
      `SELECT 1 FROM account_imports
       WHERE account_id = $1 AND history_before IS NOT NULL AND missed_since IS NULL`,
      [accountId],
    );
    return rows.length === 0;
  }

  /**
   * Claims up to `limit` imported accounts whose reconciliation is due: each is moved one interval
   * ahead (give or take a tenth, so accounts drift apart rather than bunch up) in the statement
   * that picks it, so another replica's claim skips it until then. Answers their ids.
   */
  async claimDue(now: Date, limit: number): Promise<string[]> {
    const { rows } = await this.pool.query<{ accountId: string }>(
      `UPDATE account_imports a SET next_sweep_at = $1::timestamptz + make_interval(secs => $2 * (0.9 + random() / 5))
       FROM (SELECT account_id FROM account_imports
             WHERE history_before IS NOT NULL AND (next_sweep_at IS NULL OR next_sweep_at <= $1)
             ORDER BY next_sweep_at NULLS FIRST LIMIT $3 FOR UPDATE SKIP LOCKED) due
       WHERE a.account_id = due.account_id
       RETURNING a.account_id AS "accountId"`,
      [now, this.sweepIntervalMs / 1000, limit],
    );
    return rows.map((r) => r.accountId);
  }

  /** An account that is gone is never swept again (its conversations stay). */
  async forget(accountId: string): Promise<void> {
    await this.pool.query('DELETE FROM account_imports WHERE account_id = $1', [accountId]);
  }
}
