import type { Caller } from '@svc/db';
import type { Account, Prisma } from './generated/prisma/client.ts';

/**
 * The hot reads (once per post target, once per publish) run as named prepared statements on the
 * pool instead of Prisma: Prisma compiles each query anew, which cost most of this service's CPU.
 * Their scope predicate is `visibleTo` in SQL: the partner's accounts, and for a workspace caller
 * (`$3` not null) only that workspace's.
 */
const ACCOUNT_COLUMNS = `id, partner_id, workspace_id, network, platform_id, username, display_name, avatar_url,
       page_id, status, last_error, scopes, token, token_expires_at, provider_user_id, connected_at,
       created_at, updated_at`;

export const GET_ACCOUNT_BY_ID = {
  name: 'accounts_get_account_by_id',
  text: `SELECT ${ACCOUNT_COLUMNS} FROM accounts WHERE id = $1`,
};

export const GET_VISIBLE_ACCOUNT = {
  name: 'accounts_get_visible_account',
  text: `SELECT ${ACCOUNT_COLUMNS} FROM accounts
          WHERE id = $1 AND partner_id = $2 AND ($3::text IS NULL OR workspace_id = $3)`,
};

export const GET_ACCOUNTS_BY_ID = {
  name: 'accounts_get_accounts_by_id',
  text: `SELECT ${ACCOUNT_COLUMNS} FROM accounts WHERE id = ANY($1::text[]) OR platform_id = ANY($2::text[])`,
};

/** `$2, $3` of GET_VISIBLE_ACCOUNT: the caller's partner, and its workspace if it has one. */
export const scopeValues = (caller: Caller) => [caller.partnerId, caller.workspaceId || null];

/** An `accounts` row as pg returns it, mapped to the same value Prisma's `Account` model gives. */
export function accountFromRow(row: Record<string, unknown>): Account {
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

/**
 * The account's row, locked until the transaction ends: the change made next is the only one
 * between this read and its commit, so the status it moved from is exact, and two replicas
 * applying the same report announce it once (the second finds nothing left to change).
 */
export async function lockAccount(tx: Prisma.TransactionClient, id: string): Promise<Account | null> {
  await tx.$queryRaw`SELECT id FROM accounts WHERE id = ${id} FOR UPDATE`;
  return tx.account.findUnique({ where: { id } });
}
