import type { Caller } from '@svc/db';
import type { WorkspaceDirectory } from '@svc/directory';
import { GraphApiError, type GraphClient } from '@svc/graph-client';
import type { AccountLifecycle } from './account-lifecycle.ts';
import type { AccountStore } from './account-store.ts';
import type { Account } from './generated/prisma/client.ts';
import { grantProblem, type Network, scopesFor } from './grant-check.ts';
import type { TokenVault } from './token-vault.ts';

/**
 * `POST /v1/accounts/:id/refresh`: asks the network now for the profile, the granted scopes and the
 * token's health. A provider failure is a 502 `network_error` with the provider's details; a token
 * error also moves the account (expired, revoked or error) before the 502 is returned.
 */
export class AccountRefresh {
  constructor(
    private readonly store: AccountStore,
    private readonly vault: TokenVault,
    private readonly graph: GraphClient,
    private readonly workspaces: Pick<WorkspaceDirectory, 'scope'>,
    private readonly lifecycle: Pick<AccountLifecycle, 'applyTokenProblem'>,
  ) {}

  async refresh(caller: Caller, id: string): Promise<Account> {
    const account = await this.store.visible(caller, id);
    const token = this.vault.open(account);
    try {
      // A dead token makes the profile read fail with the provider's token error (handled below).
      const profile = await this.readProfile(account, token);
      const info = await this.graph.oauth.debugToken(token);
      const scopes = scopesFor(
        { scopes: info.scopes ?? [], granular: info.granular_scopes },
        account.platformId,
        account.pageId,
      );
      const problem = grantProblem(account.network as Network, profile.displayName, scopes);
      const scope = await this.workspaces.scope(account.workspaceId);
      const fields = {
        ...profile,
        scopes,
        tokenExpiresAt: info.expires_at ? new Date(info.expires_at * 1000) : null,
        status: problem ? 'error' : 'active',
        lastError: problem,
      };
      return await this.store.saveRefreshed(account, fields, scope);
    } catch (error) {
      if (error instanceof GraphApiError && error.tokenProblem) {
        await this.lifecycle.applyTokenProblem(
          account,
          error.tokenProblem,
          error.message,
          Number(error.details?.subcode ?? 0),
        );
      }
      throw error;
    }
  }

  private async readProfile(account: Account, token: string) {
    if (account.network === 'page_network') {
      const page = await this.graph.accounts.page(token, account.platformId);
      return {
        username: page.name,
        displayName: page.name,
        avatarUrl: page.picture?.data.url ?? account.avatarUrl,
      };
    }
    const ig = await this.graph.accounts.instagramUser(token, account.platformId);
    return {
      username: ig.username ?? account.username,
      displayName: ig.name ?? ig.username ?? account.displayName,
      avatarUrl: ig.profile_picture_url ?? account.avatarUrl,
    };
  }
}
