import { eventRow, writeOutbox } from '@svc/bus';
import type { EventEnvelope } from '@svc/contracts/public';
import { errors } from '@svc/errors';
import { parseSignedRequest, type TokenProblem } from '@svc/graph-client';
import { disconnectAccounts } from './accounts.ts';
import type { AccountsContext } from './context.ts';
import { accountChanged, accountEvent, scopeOf } from './events.ts';
import type { Account, Prisma } from './generated/prisma/client.ts';
import { lockAccount, statusChangeEvents } from './status-change.ts';

/**
 * How accounts leave `active`: their token expires (sweeper), a network call finds the token dead
 * (any service reports it), the user removes the app at the provider (deauthorize callback), or
 * the workspace is deleted. Each transition is one conditional UPDATE, so replicas and repeated
 * reports never emit an event twice.
 */
const SUBCODE_APP_REMOVED = 458;

const expiredMessage = (at: Date) =>
  `The access token expired on ${at.toISOString()}. Connect the account again to renew it.`;
const DEAUTHORIZED_MESSAGE =
  'The user removed this app at the network provider (deauthorized), so its access was revoked. Connect the account again to restore it.';

/** A network call failed with a token error: record it on the account (and tell the partner). */
export async function applyTokenProblem(
  ctx: AccountsContext,
  account: Account,
  problem: TokenProblem,
  message: string,
  subcode = 0,
): Promise<Account> {
  const now = ctx.now();
  if (problem === 'revoked' && subcode === SUBCODE_APP_REMOVED) {
    await revoke(ctx, [account], DEAUTHORIZED_MESSAGE, 'deauthorized');
  } else if (problem === 'revoked') {
    await revoke(
      ctx,
      [account],
      `The network no longer accepts this account's token: ${message}. Connect the account again.`,
      'token_revoked',
    );
  } else if (problem === 'expired') {
    await transition(
      ctx,
      account,
      { status: 'expired', lastError: `${expiredMessage(now)} (${message})` },
      'account.expired',
    );
  } else {
    await transition(ctx, account, {
      status: 'error',
      lastError: `The network refused this account's token: ${message}. Connect the account again.`,
    });
  }
  return (await ctx.db.account.findUnique({ where: { id: account.id } })) ?? account;
}

/**
 * Moves an account out of a live state (active or error) once; `type` is the event to emit, else
 * `accounts.changed` tells the services that cache accounts and `account.changed` the partner.
 */
async function transition(
  ctx: AccountsContext,
  account: Account,
  change: { status: string; lastError: string },
  type?: 'account.expired',
): Promise<void> {
  const scope = await scopeOf(ctx.identity, account.workspaceId);
  await ctx.db.$transaction(async (tx) => {
    const before = await lockAccount(tx, account.id);
    if (!before || !['active', 'error'].includes(before.status)) return;
    const updated = await tx.account.update({ where: { id: account.id }, data: change });
    const events = type
      ? [accountEvent(type, scope, updated, { error: change.lastError })]
      : [accountChanged(scope, updated), ...statusChangeEvents(scope, before, updated)];
    await writeOutbox(tx, events.map(eventRow));
  });
  ctx.relay.kick();
}

/** Token discarded, scopes emptied, status `revoked`, `account.disconnected` with the reason. */
async function revoke(
  ctx: AccountsContext,
  accounts: Account[],
  lastError: string,
  reason: string,
): Promise<number> {
  let revoked = 0;
  for (const account of accounts) {
    const scope = await scopeOf(ctx.identity, account.workspaceId);
    await ctx.db.$transaction(async (tx) => {
      const moved = await tx.account.updateMany({
        where: { id: account.id, status: { not: 'revoked' } },
        data: { status: 'revoked', token: null, scopes: [], lastError, tokenExpiresAt: null },
      });
      if (moved.count === 0) return;
      revoked += 1;
      const updated = await tx.account.findUniqueOrThrow({ where: { id: account.id } });
      await writeOutbox(tx, [eventRow(accountEvent('account.disconnected', scope, updated, { reason }))]);
    });
  }
  ctx.relay.kick();
  return revoked;
}

/**
 * The provider's deauthorize callback: only a signed_request that verifies with the app secret
 * changes anything. Every account the user granted, in every workspace, is revoked.
 */
export async function deauthorize(ctx: AccountsContext, signedRequest: string): Promise<number> {
  const payload = parseSignedRequest(signedRequest, ctx.config.META_APP_SECRET);
  if (!payload) throw errors.unauthorized('signed_request does not verify with the app secret');
  if (!payload.user_id) throw errors.validation('signed_request', 'signed_request carries no user_id');
  const accounts = await ctx.db.account.findMany({ where: { providerUserId: payload.user_id } });
  ctx.logger.info({ accounts: accounts.length }, 'deauthorize callback verified');
  return revoke(ctx, accounts, DEAUTHORIZED_MESSAGE, 'deauthorized');
}

/**
 * Moves `active` accounts whose token passed its expiry to `expired` with `account.expired`.
 * Claims rows with SKIP LOCKED, so several replicas share the work and never double-emit.
 */
export async function sweepExpired(ctx: AccountsContext, batchSize = 100): Promise<number> {
  const now = ctx.now();
  const claimed = await ctx.db.$transaction(async (tx) => {
    const rows = await tx.$queryRaw<{ id: string }[]>`
      SELECT id FROM accounts WHERE status = 'active' AND token_expires_at <= ${now}
      ORDER BY token_expires_at LIMIT ${batchSize} FOR UPDATE SKIP LOCKED`;
    if (rows.length === 0) return [];
    const accounts = await tx.account.findMany({ where: { id: { in: rows.map((r) => r.id) } } });
    const events: EventEnvelope[] = [];
    for (const account of accounts) {
      const error = expiredMessage(account.tokenExpiresAt ?? now);
      const updated = await tx.account.update({
        where: { id: account.id },
        data: { status: 'expired', lastError: error },
      });
      events.push(
        accountEvent('account.expired', await scopeOf(ctx.identity, account.workspaceId), updated, { error }),
      );
    }
    await writeOutbox(tx, events.map(eventRow));
    return accounts;
  });
  if (claimed.length > 0) ctx.relay.kick();
  return claimed.length;
}

/** `workspace.deleted`: every account is disconnected, tokens and metadata and links removed. */
export async function purgeWorkspace(ctx: AccountsContext, signal: EventEnvelope): Promise<void> {
  const workspaceId = signal.workspace;
  if (!workspaceId) return;
  // Links first: once account.disconnected is out, nothing of the workspace's connect flows is left.
  const links = await ctx.db.connectLink.findMany({ where: { workspaceId }, select: { id: true } });
  const linkIds = links.map((l) => l.id);
  await ctx.db.$transaction([
    ctx.db.pageChoice.deleteMany({ where: { linkId: { in: linkIds } } }),
    ctx.db.oAuthState.deleteMany({ where: { linkId: { in: linkIds } } }),
    ctx.db.connectLink.deleteMany({ where: { workspaceId } }),
  ] satisfies Prisma.PrismaPromise<unknown>[]);
  const accounts = await ctx.db.account.findMany({ where: { workspaceId } });
  const scope = { partner: signal.partner, workspace: workspaceId, external_id: signal.external_id };
  await disconnectAccounts(ctx, accounts, scope, 'workspace_deleted');
  ctx.logger.info({ workspace: workspaceId, accounts: accounts.length }, 'workspace purged');
}

/** Single-use OAuth states and page choices are kept a day for support questions, then dropped. */
export async function purgeSpentFlowRows(ctx: AccountsContext): Promise<void> {
  const before = new Date(ctx.now().getTime() - 86_400_000);
  await ctx.db.oAuthState.deleteMany({ where: { expiresAt: { lt: before } } });
  await ctx.db.pageChoice.deleteMany({ where: { expiresAt: { lt: before } } });
}
