import type { AccountsDirectory, KnownAccount } from '@svc/directory';
import type { Logger } from '@svc/logging';
import type { AccountImports } from './account-imports.ts';
import { CallPacer, SweepStopped } from './call-pacer.ts';
import type { CatchUp } from './catch-up.ts';
import type { SendSettlement } from './send-settlement.ts';

export interface ReconciliationConfig {
  intervalMs: number;
  lookbackMs: number;
  callsPerSecond: number;
  concurrency: number;
}

/** How often a replica looks for accounts whose reconciliation is due. */
export const tickMs = (config: ReconciliationConfig) =>
  Math.min(5_000, Math.max(250, config.intervalMs / 10));

/**
 * The periodic reconciliation of every imported account: what no webhook brought (our outage
 * beyond Meta's retries, a delivery Meta never made) is read from the network, stored and
 * announced (`message.received`, `comment.received`, `message.sent`), as its webhook would have
 * been; sends whose outcome nobody learned are settled (send-settlement.ts). Each account is due
 * once per interval, its first time placed at random within it; a replica claims due accounts in
 * `account_imports` (moving them one interval ahead), so two replicas never sweep one account at
 * once, and sweeps up to `concurrency` of them at a time, each read at `callsPerSecond` at most.
 * Accounts that are not active are skipped (their webhooks are dropped and the import when they
 * are active again brings what they missed); an account that is gone is forgotten.
 */
export class Reconciliation {
  private readonly running = new Set<Promise<void>>();
  private stopped = false;

  constructor(
    private readonly deps: {
      imports: AccountImports;
      accounts: AccountsDirectory;
      catchUp: CatchUp;
      settlement: SendSettlement;
      logger: Logger;
      now: () => Date;
      config: ReconciliationConfig;
    },
  ) {}

  get config(): ReconciliationConfig {
    return this.deps.config;
  }

  /** Claims the due accounts this replica has room for and starts their sweeps. */
  async tick(): Promise<void> {
    const free = this.deps.config.concurrency - this.running.size;
    if (this.stopped || free <= 0) return;
    for (const accountId of await this.deps.imports.claimDue(this.deps.now(), free)) {
      const sweep = this.reconcile(accountId)
        .catch((err: unknown) => this.deps.logger.warn({ err, account: accountId }, 'reconciliation failed'))
        .finally(() => this.running.delete(sweep));
      this.running.add(sweep);
    }
  }

  /** No new sweeps; those running stop at their next network call. */
  async stop(): Promise<void> {
    this.stopped = true;
    await Promise.allSettled([...this.running]);
  }

  async reconcile(accountId: string): Promise<void> {
    const { accounts, imports, settlement } = this.deps;
    const account = await accounts.byId(accountId);
    if (!account) {
      await settlement.giveUp(accountId, true);
      await imports.forget(accountId);
      return;
    }
    if (account.status !== 'active') return settlement.giveUp(accountId, false);
    try {
      await this.deps.catchUp.whileActive(accountId, (token) => this.sweep(account, token));
    } catch (error) {
      if (!(error instanceof SweepStopped)) throw error;
    }
  }

  /** One token for the whole sweep: a refusal of it is then known to be of that token. */
  private async sweep(account: KnownAccount, token: string): Promise<void> {
    const { catchUp, settlement, logger, now, config } = this.deps;
    const startedAt = Date.now();
    const pacer = new CallPacer(config.callsPerSecond, () => this.stopped);
    const since = new Date(now().getTime() - config.lookbackMs);
    const read = await catchUp.sweep(account, token, { pacer, since });
    const settled = await settlement.settle(account, token, pacer);
    // A line per account and interval when something was missing; the quiet ones only at debug.
    const level = read.messages > 0 || settled > 0 ? 'info' : 'debug';
    logger[level](
      { account: account.id, ...read, settled, calls: pacer.calls, ms: Date.now() - startedAt },
      'inbox reconciled',
    );
  }
}
