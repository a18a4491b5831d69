import { type Caller, type Fields, selectList } from '@svc/db';
import type { Account, Prisma } from './generated/prisma/client.ts';

/**
 * The hot reads (once per post target, once per publish) run as named prepared statements on the
 * pool instead of Prisma: Prisma compiles each query anew, which cost most of this service's CPU.
 * They return the `Account` model's fields by name (`selectList`), as Prisma would.
 * Their scope predicate is `visibleTo` in SQL: the partner's accounts, and for a workspace caller
 * (`$3` not null) only that workspace's.
 */
const ACCOUNT_FIELDS: Fields<Account> = {
  id: true,
  partnerId: true,
  workspaceId: true,
  network: true,
  platformId: true,
  username: true,
  displayName: true,
  avatarUrl: true,
  pageId: true,
  status: true,
  lastError: true,
  // Prisma answers a list column's NULL as an empty list; these reads answer the same.
  scopes: `coalesce(scopes, '{}')`,
  token: true,
  tokenExpiresAt: true,
  providerUserId: true,
  connectedAt: true,
  createdAt: true,
  updatedAt: true,
};
const ACCOUNT_COLUMNS = selectList(ACCOUNT_FIELDS);

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

/**
 * The account's row, locked until the transaction ends: the change made next is the only one
 * between this read and its commit, so the status it moved from is exact, and two replicas
 * applying the same report announce it once (the second finds nothing left to change).
 */
export async function lockAccount(tx: Prisma.TransactionClient, id: string): Promise<Account | null> {
  await tx.$queryRaw`SELECT id FROM accounts WHERE id = ${id} FOR UPDATE`;
  return tx.account.findUnique({ where: { id } });
}
