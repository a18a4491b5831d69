import type { WorkspaceDirectory } from '@svc/directory';
import type { AccountStore } from './account-store.ts';

const BATCH_SIZE = 100;

export const expiredMessage = (at: Date) =>
  `The access token expired on ${at.toISOString()}. Connect the account again to renew it.`;

/** Moves `active` accounts whose token passed its expiry to `expired`, with `account.expired` each. */
export class ExpirySweep {
  constructor(
    private readonly store: AccountStore,
    private readonly workspaces: Pick<WorkspaceDirectory, 'scope'>,
    private readonly now: () => Date,
  ) {}

  /** One batch; answers how many accounts it moved (replicas sweeping at once share the rows). */
  run(): Promise<number> {
    const now = this.now();
    return this.store.expireDue({
      now,
      batchSize: BATCH_SIZE,
      scopeOf: (workspaceId) => this.workspaces.scope(workspaceId),
      lastError: (account) => expiredMessage(account.tokenExpiresAt ?? now),
    });
  }
}
