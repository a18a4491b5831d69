import { eventRow, writeOutbox } from '@svc/bus';
import type { Caller } from '@svc/db';
import { GraphApiError } from '@svc/graph-client';
import { getAccount } from './accounts.ts';
import type { AccountsContext } from './context.ts';
import { accountChanged, scopeOf } from './events.ts';
import type { Account } from './generated/prisma/client.ts';
import { grantProblem, type Network, scopesFor } from './grant-check.ts';
import { applyTokenProblem } from './lifecycle.ts';
import { lockAccount, statusChangeEvents } from './status-change.ts';
import { openToken } from './vault.ts';

/**
 * `POST /v1/accounts/:id/refresh`: asks the network now for the profile, the granted scopes and the
 * token's health. A provider failure is a 502 `network_error` with the provider's details; a token
 * error also moves the account (expired, revoked or error) before the 502 is returned.
 */
export async function refreshAccount(ctx: AccountsContext, caller: Caller, id: string): Promise<Account> {
  const account = await getAccount(ctx.pool, caller, id);
  const token = openToken(ctx.keyring, account);
  try {
    // A dead token makes the profile read fail with the provider's token error (handled below).
    const profile = await readProfile(ctx, account, token);
    const info = await ctx.graph.oauth.debugToken(token);
    const scopes = scopesFor(
      { scopes: info.scopes ?? [], granular: info.granular_scopes },
      account.platformId,
      account.pageId,
    );
    const problem = grantProblem(account.network as Network, profile.displayName, scopes);
    const scope = await scopeOf(ctx.identity, account.workspaceId);
    const updated = await ctx.db.$transaction(async (tx) => {
      const before = (await lockAccount(tx, account.id)) ?? account;
      const row = await tx.account.update({
        where: { id: account.id },
        data: {
          ...profile,
          scopes,
          tokenExpiresAt: info.expires_at ? new Date(info.expires_at * 1000) : null,
          status: problem ? 'error' : 'active',
          lastError: problem,
        },
      });
      const events = [accountChanged(scope, row), ...statusChangeEvents(scope, before, row)];
      await writeOutbox(tx, events.map(eventRow));
      return row;
    });
    ctx.relay.kick();
    return updated;
  } catch (error) {
    if (error instanceof GraphApiError && error.tokenProblem) {
      await applyTokenProblem(
        ctx,
        account,
        error.tokenProblem,
        error.message,
        Number(error.details?.subcode ?? 0),
      );
    }
    throw error;
  }
}

async function readProfile(ctx: AccountsContext, account: Account, token: string) {
  if (account.network === 'page_network') {
    const page = await ctx.graph.accounts.page(token, account.platformId);
    return {
      username: page.name,
      displayName: page.name,
      avatarUrl: page.picture?.data.url ?? account.avatarUrl,
    };
  }
  const ig = await ctx.graph.accounts.instagramUser(token, account.platformId);
  return {
    username: ig.username ?? account.username,
    displayName: ig.name ?? ig.username ?? account.displayName,
    avatarUrl: ig.profile_picture_url ?? account.avatarUrl,
  };
}
