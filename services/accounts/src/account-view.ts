import type { Account as AccountMessage } from '@svc/contracts';
import type { AccountView } from '@svc/contracts/public';
import type { Account as AccountRow } from './generated/prisma/client.ts';

type AccountInit = Omit<AccountMessage, '$typeName' | '$unknown'>;

/**
 * The account as other services use it internally (publishing's checks and jobs); the token never
 * leaves this service. Partners see `accountJson` instead.
 */
export function toAccountMessage(row: AccountRow): AccountInit {
  return {
    id: row.id,
    workspaceId: row.workspaceId,
    network: row.network,
    platformId: row.platformId,
    username: row.username,
    displayName: row.displayName,
    avatarUrl: row.avatarUrl,
    pageId: row.pageId,
    status: row.status,
    lastError: row.lastError ?? undefined,
    scopes: row.scopes,
    tokenExpiresAt: row.tokenExpiresAt?.toISOString() ?? '',
    connectedAt: row.connectedAt.toISOString(),
  };
}

/**
 * The account as partners see it (`AccountView`): what `GET /v1/accounts/:id` answers and what
 * `data.account` of an account event carries. The only place an account row becomes it.
 */
export function accountJson(row: AccountRow): AccountView {
  return {
    id: row.id,
    workspace: row.workspaceId,
    network: row.network as AccountView['network'],
    platform_id: row.platformId,
    username: row.username,
    display_name: row.displayName,
    avatar_url: row.avatarUrl,
    page_id: row.pageId,
    status: row.status,
    last_error: row.lastError,
    scopes: row.scopes,
    token_expires_at: row.tokenExpiresAt?.toISOString() ?? null,
    connected_at: row.connectedAt.toISOString(),
  };
}

/** The record of an account that is being removed: no token, no scopes, status `disconnected`. */
export function disconnectedSnapshot(row: AccountRow): AccountRow {
  return { ...row, status: 'disconnected', lastError: null, scopes: [], token: null, tokenExpiresAt: null };
}
