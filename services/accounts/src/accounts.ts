import { eventRow, writeOutbox } from '@svc/bus';
import { type Caller, found, pageWindow, visibleTo } from '@svc/db';
import { errors } from '@svc/errors';
import { isId } from '@svc/ids';
import type pg from 'pg';
import { disconnectedSnapshot } from './account-view.ts';
import type { AccountsContext } from './context.ts';
import { accountEvent, type EventScope, scopeOf } from './events.ts';
import type { Account } from './generated/prisma/client.ts';
import { isNetwork, NETWORKS } from './grant-check.ts';

const ACCOUNT_STATUSES = ['active', 'expired', 'revoked', 'error'] as const;

/**
 * The hot reads (once per post target, once per publish) run as named prepared statements on the
 * pool instead of Prisma: Prisma compiles each query anew, which cost most of this service's CPU.
 * Their scope predicate is `visibleTo` in SQL: the partner's accounts, and for a workspace caller
 * (`$3` not null) only that workspace's.
 */
const ACCOUNT_COLUMNS = `id, partner_id, workspace_id, network, platform_id, username, display_name, avatar_url,
       page_id, status, last_error, scopes, token, token_expires_at, provider_user_id, connected_at,
       created_at, updated_at`;

const GET_ACCOUNT_BY_ID = {
  name: 'accounts_get_account_by_id',
  text: `SELECT ${ACCOUNT_COLUMNS} FROM accounts WHERE id = $1`,
};

const GET_VISIBLE_ACCOUNT = {
  name: 'accounts_get_visible_account',
  text: `SELECT ${ACCOUNT_COLUMNS} FROM accounts
          WHERE id = $1 AND partner_id = $2 AND ($3::text IS NULL OR workspace_id = $3)`,
};

/** An `accounts` row as pg returns it, mapped to the same value Prisma's `Account` model gives. */
function accountFromRow(row: Record<string, unknown>): Account {
  return {
    id: row.id as string,
    partnerId: row.partner_id as string,
    workspaceId: row.workspace_id as string,
    network: row.network as string,
    platformId: row.platform_id as string,
    username: row.username as string,
    displayName: row.display_name as string,
    avatarUrl: row.avatar_url as string,
    pageId: row.page_id as string,
    status: row.status as string,
    lastError: row.last_error as string | null,
    scopes: (row.scopes as string[] | null) ?? [],
    token: row.token as string | null,
    tokenExpiresAt: row.token_expires_at as Date | null,
    providerUserId: row.provider_user_id as string | null,
    connectedAt: row.connected_at as Date,
    createdAt: row.created_at as Date,
    updatedAt: row.updated_at as Date,
  };
}

const scopeValues = (caller: Caller) => [caller.partnerId, caller.workspaceId || null];

/** An account of the caller's scope; another partner's or workspace's is not_found, not forbidden. */
export async function getAccount(pool: pg.Pool, caller: Caller, id: string): Promise<Account> {
  const { rows } = await pool.query<Record<string, unknown>>({
    ...GET_VISIBLE_ACCOUNT,
    values: [id, ...scopeValues(caller)],
  });
  return accountFromRow(found(rows[0], 'account'));
}

/** The accounts of the caller's scope among `ids`; unknown or out-of-scope ids are left out, in no order. */
const GET_ACCOUNTS_BY_ID = {
  name: 'accounts_get_accounts_by_id',
  text: `SELECT ${ACCOUNT_COLUMNS} FROM accounts WHERE id = ANY($1::text[]) OR platform_id = ANY($2::text[])`,
};

/** Accounts by id or network id whatever their scope, for services that check the scope themselves. */
export async function describeAccounts(
  pool: pg.Pool,
  ids: string[],
  platformIds: string[] = [],
): Promise<Account[]> {
  if (ids.length === 0 && platformIds.length === 0) return [];
  const { rows } = await pool.query<Record<string, unknown>>({
    ...GET_ACCOUNTS_BY_ID,
    values: [ids, platformIds],
  });
  return rows.map(accountFromRow);
}

/** Any account by id, whatever its scope: only for the token vault, whose callers are services. */
export async function getVaultAccount(pool: pg.Pool, id: string): Promise<Account> {
  const { rows } = await pool.query<Record<string, unknown>>({ ...GET_ACCOUNT_BY_ID, values: [id] });
  return accountFromRow(found(rows[0], 'account'));
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
    await writeOutbox(tx, events.map(eventRow));
  });
  ctx.relay.kick();
}

export async function deleteAccount(ctx: AccountsContext, caller: Caller, id: string): Promise<void> {
  const account = await getAccount(ctx.pool, caller, id);
  await disconnectAccounts(ctx, [account], await scopeOf(ctx.identity, account.workspaceId));
}

/** "Disconnect" on the hosted connect page: the link token names the workspace. */
export async function disconnectFromLink(ctx: AccountsContext, workspaceId: string, accountId: string) {
  // The id comes from a page's URL: anything that is not an account id is no account.
  if (!isId('account', accountId)) throw errors.notFound('account');
  const account = found(await ctx.db.account.findFirst({ where: { id: accountId, workspaceId } }), 'account');
  await disconnectAccounts(ctx, [account], await scopeOf(ctx.identity, workspaceId));
}
