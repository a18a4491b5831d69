import { type Caller, found, pageWindow, visibleTo } from '@svc/db';
import { errors } from '@svc/errors';
import { disconnectedSnapshot } from './account-view.ts';
import type { AccountsContext } from './context.ts';
import type { Db } from './db.ts';
import { accountEvent, type EventScope, scopeOf, writeEvents } from './events.ts';
import type { Account } from './generated/prisma/client.ts';
import { isNetwork, NETWORKS } from './grant-check.ts';

export const ACCOUNT_STATUSES = ['active', 'expired', 'revoked', 'error'] as const;

/** An account of the caller's scope; another partner's or workspace's is not_found, not forbidden. */
export async function getAccount(db: Db, caller: Caller, id: string): Promise<Account> {
  return found(await db.account.findFirst({ where: { id, ...visibleTo(caller) } }), 'account');
}

export async function listAccounts(
  ctx: AccountsContext,
  caller: Caller,
  query: { workspaceId: string; network: string; status: string; page: number; limit: number },
): Promise<{ accounts: Account[]; total: number }> {
  await ctx.identity.getWorkspace({ partnerId: caller.partnerId, workspaceId: query.workspaceId });
  if (query.network && !isNetwork(query.network))
    throw errors.validation('network', `network must be one of ${NETWORKS.join(', ')}`);
  if (query.status && !(ACCOUNT_STATUSES as readonly string[]).includes(query.status))
    throw errors.validation('status', `status must be one of ${ACCOUNT_STATUSES.join(', ')}`);
  const where = {
    ...visibleTo(caller),
    workspaceId: query.workspaceId,
    ...(query.network ? { network: query.network } : {}),
    ...(query.status ? { status: query.status } : {}),
  };
  const [accounts, total] = await Promise.all([
    ctx.db.account.findMany({ where, orderBy: { id: 'asc' }, ...pageWindow(query.page, query.limit) }),
    ctx.db.account.count({ where }),
  ]);
  return { accounts, total };
}

/**
 * Disconnects accounts: the rows (token and metadata) are removed, posts and conversations keep
 * their history under the account id, and each yields `account.disconnected` whose account shows
 * status `disconnected`.
 */
export async function disconnectAccounts(
  ctx: AccountsContext,
  accounts: Account[],
  scope: EventScope,
  reason?: string,
): Promise<void> {
  if (accounts.length === 0) return;
  await ctx.db.$transaction(async (tx) => {
    const events = [];
    for (const account of accounts) {
      const removed = await tx.account.deleteMany({ where: { id: account.id } });
      // A concurrent disconnect got there first: it emitted the event, we emit none.
      if (removed.count === 0) continue;
      const snapshot = disconnectedSnapshot(account);
      events.push(accountEvent('account.disconnected', scope, snapshot, reason ? { reason } : {}));
    }
    await writeEvents(tx, events);
  });
  ctx.relay.kick();
}

export async function deleteAccount(ctx: AccountsContext, caller: Caller, id: string): Promise<void> {
  const account = await getAccount(ctx.db, caller, id);
  await disconnectAccounts(ctx, [account], await scopeOf(ctx.identity, account.workspaceId));
}

/** "Disconnect" on the hosted connect page: the link token names the workspace. */
export async function disconnectFromLink(ctx: AccountsContext, workspaceId: string, accountId: string) {
  const account = found(await ctx.db.account.findFirst({ where: { id: accountId, workspaceId } }), 'account');
  await disconnectAccounts(ctx, [account], await scopeOf(ctx.identity, workspaceId));
}
