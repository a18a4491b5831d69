import type { Caller } from '@svc/db';
import type { WorkspaceDirectory } from '@svc/directory';
import { errors } from '@svc/errors';
import type { AccountStore } from './account-store.ts';
import type { Account } from './generated/prisma/client.ts';
import { isNetwork, NETWORKS } from './grant-check.ts';

const ACCOUNT_STATUSES = ['active', 'expired', 'revoked', 'error'] as const;

/** The partner API's account operations: listing a workspace's accounts, and disconnecting one. */
export class Accounts {
  constructor(
    private readonly store: AccountStore,
    private readonly workspaces: Pick<WorkspaceDirectory, 'confirmOwned' | 'scope'>,
  ) {}

  async list(
    caller: Caller,
    query: { workspaceId: string; network: string; status: string; page: number; limit: number },
  ): Promise<{ accounts: Account[]; total: number }> {
    await this.workspaces.confirmOwned(caller, query.workspaceId);
    if (query.network && !isNetwork(query.network))
      throw errors.validation('network', `network must be one of ${NETWORKS.join(', ')}`);
    if (query.status && !(ACCOUNT_STATUSES as readonly string[]).includes(query.status))
      throw errors.validation('status', `status must be one of ${ACCOUNT_STATUSES.join(', ')}`);
    return this.store.list(caller, query);
  }

  /** Disconnects the account: its row goes, and `account.disconnected` tells the partner. */
  async delete(caller: Caller, id: string): Promise<void> {
    const account = await this.store.visible(caller, id);
    await this.store.disconnect([account], await this.workspaces.scope(account.workspaceId));
  }
}
