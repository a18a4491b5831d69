import { type AccountsService, callerOf, type ServiceImplementation } from '@svc/contracts';
import { errors } from '@svc/errors';
import { isTokenProblem } from '@svc/graph-client';
import type { Logger } from '@svc/logging';
import type { AccountLifecycle } from './account-lifecycle.ts';
import type { AccountRefresh } from './account-refresh.ts';
import type { AccountStore } from './account-store.ts';
import { accountJson, toAccountMessage } from './account-view.ts';
import type { Accounts } from './accounts.ts';
import type { ConnectFlow } from './connect-flow.ts';
import { viewOfConnectLink } from './connect-link-view.ts';
import type { ConnectLinks } from './connect-links.ts';
import type { ConnectOutcome } from './connect-outcome.ts';
import type { ConnectPage } from './connect-page.ts';
import type { TokenVault } from './token-vault.ts';
import type { VaultClients } from './vault-clients.ts';

interface AccountsHandlerDeps {
  store: AccountStore;
  accounts: Accounts;
  refresh: AccountRefresh;
  lifecycle: AccountLifecycle;
  links: ConnectLinks;
  page: ConnectPage;
  flow: ConnectFlow;
  vault: TokenVault;
  vaultClients: VaultClients;
  logger: Logger;
}

function toOutcomeMessage(outcome: ConnectOutcome) {
  return {
    status: outcome.status,
    accounts: outcome.accounts.map(toAccountMessage),
    problems: outcome.problems,
    choiceId: outcome.choiceId ?? '',
    pages: outcome.pages ?? [],
    redirectUrl: outcome.redirectUrl,
    workspaceName: outcome.workspaceName,
  };
}

export function accountsHandlers(deps: AccountsHandlerDeps): ServiceImplementation<typeof AccountsService> {
  const { store, accounts, refresh, lifecycle, links, page, flow, vault, vaultClients, logger } = deps;
  return {
    async createConnectLink(req) {
      const { link, url } = await links.create(callerOf(req.caller), {
        workspaceId: req.workspaceId,
        networks: req.networks,
        redirectUrl: req.redirectUrl,
        expiresInSeconds: req.expiresInSeconds,
        embedSessionId: req.embedSessionId,
      });
      return {
        link: {
          id: link.id,
          workspaceId: link.workspaceId,
          url,
          networks: link.networks,
          redirectUrl: link.redirectUrl ?? '',
          expiresAt: link.expiresAt.toISOString(),
          createdAt: link.createdAt.toISOString(),
        },
        linkJson: JSON.stringify(viewOfConnectLink(link, url)),
      };
    },
    async getConnectPage(req) {
      return page.view(req.linkToken);
    },
    async startConnect(req) {
      return flow.start(req.linkToken, req.network);
    },
    async completeConnect(req) {
      const outcome = await flow.complete({
        state: req.state,
        code: req.code,
        error: req.error,
        browserNonce: req.browserNonce,
      });
      return { outcome: toOutcomeMessage(outcome) };
    },
    async choosePages(req) {
      return { outcome: toOutcomeMessage(await flow.choosePages(req.choiceId, req.pageIds)) };
    },
    async disconnectFromPage(req) {
      await page.disconnect(req.linkToken, req.accountId);
      return {};
    },
    async listAccounts(req) {
      const { accounts: found, total } = await accounts.list(callerOf(req.caller), req);
      return { accountsJson: found.map((a) => JSON.stringify(accountJson(a))), total };
    },
    async getAccount(req) {
      const account = await store.visible(callerOf(req.caller), req.accountId);
      return { accountJson: JSON.stringify(accountJson(account)) };
    },
    async describeAccounts(req) {
      const found = await store.describe(req.accountIds, req.platformIds);
      return { accounts: found.map((a) => ({ account: toAccountMessage(a), partnerId: a.partnerId })) };
    },
    async deleteAccount(req) {
      await accounts.delete(callerOf(req.caller), req.accountId);
      return {};
    },
    async refreshAccount(req) {
      const account = await refresh.refresh(callerOf(req.caller), req.accountId);
      return { accountJson: JSON.stringify(accountJson(account)) };
    },
    async deauthorize(req) {
      return { accountsRevoked: await lifecycle.deauthorize(req.signedRequest) };
    },
    async getAccountToken(req, call) {
      const client = vaultClients.authorize(call);
      const account = await store.byId(req.accountId);
      const token = vault.handOut(account);
      logger.info({ account: account.id, client }, 'token handed out');
      return { account: toAccountMessage(account), token, tokenSubject: account.pageId };
    },
    async reportTokenProblem(req, call) {
      vaultClients.authorize(call);
      if (!isTokenProblem(req.problem))
        throw errors.validation('problem', 'problem must be expired, revoked or invalid');
      const account = await store.byId(req.accountId);
      const updated = await lifecycle.applyTokenProblem(account, req.problem, req.message, req.subcode);
      return { account: toAccountMessage(updated) };
    },
  };
}
