import { type AccountsService, callerOf, type ServiceImplementation } from '@svc/contracts';
import { errors } from '@svc/errors';
import { isTokenProblem } from '@svc/graph-client';
import { accountJson, toAccountMessage } from './account-view.ts';
import {
  deleteAccount,
  describeAccounts,
  disconnectFromLink,
  getAccount,
  getVaultAccount,
  listAccounts,
} from './accounts.ts';
import { type ConnectOutcome, choosePages, completeConnect, startConnect } from './connect-flow.ts';
import { viewOfConnectLink } from './connect-link-view.ts';
import { connectPageUrl, createConnectLink, findLink } from './connect-links.ts';
import type { AccountsContext } from './context.ts';
import { applyTokenProblem, deauthorize } from './lifecycle.ts';
import { refreshAccount } from './refresh.ts';
import { handOutToken, type VaultClients } from './vault.ts';

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

export function accountsHandlers(
  ctx: AccountsContext,
  vault: VaultClients,
): ServiceImplementation<typeof AccountsService> {
  return {
    async createConnectLink(req) {
      const caller = callerOf(req.caller);
      const { link, token } = await createConnectLink(
        ctx.db,
        ctx.identity,
        {
          partnerId: caller.partnerId,
          workspaceId: req.workspaceId,
          networks: req.networks,
          redirectUrl: req.redirectUrl,
          expiresInSeconds: req.expiresInSeconds,
          embedSessionId: req.embedSessionId,
        },
        { ttlSeconds: ctx.config.CONNECT_LINK_TTL_SECONDS, now: ctx.now() },
      );
      const url = connectPageUrl(ctx.config.PUBLIC_BASE_URL, token);
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
      const { state, link } = await findLink(ctx, req.linkToken, ctx.now());
      if (!link || state !== 'open') return { linkState: state };
      const [{ workspace }, accounts] = await Promise.all([
        ctx.identity.describeWorkspace({ workspaceId: link.workspaceId }),
        ctx.db.account.findMany({ where: { workspaceId: link.workspaceId }, orderBy: { id: 'asc' } }),
      ]);
      return {
        linkState: state,
        workspaceName: workspace?.name ?? '',
        networks: link.networks,
        accounts: accounts.map(toAccountMessage),
        expiresAt: link.expiresAt.toISOString(),
      };
    },
    async startConnect(req) {
      return startConnect(ctx, req.linkToken, req.network);
    },
    async completeConnect(req) {
      const outcome = await completeConnect(ctx, {
        state: req.state,
        code: req.code,
        error: req.error,
        browserNonce: req.browserNonce,
      });
      return { outcome: toOutcomeMessage(outcome) };
    },
    async choosePages(req) {
      return { outcome: toOutcomeMessage(await choosePages(ctx, req.choiceId, req.pageIds)) };
    },
    async disconnectFromPage(req) {
      const { state, link } = await findLink(ctx, req.linkToken, ctx.now());
      if (!link || state !== 'open') throw errors.notFound('connect link');
      await disconnectFromLink(ctx, link.workspaceId, req.accountId);
      return {};
    },
    async listAccounts(req) {
      const { accounts, total } = await listAccounts(ctx, callerOf(req.caller), req);
      return { accountsJson: accounts.map((a) => JSON.stringify(accountJson(a))), total };
    },
    async getAccount(req) {
      const account = await getAccount(ctx.pool, callerOf(req.caller), req.accountId);
      return { accountJson: JSON.stringify(accountJson(account)) };
    },
    async describeAccounts(req) {
      const accounts = await describeAccounts(ctx.pool, req.accountIds, req.platformIds);
      return {
        accounts: accounts.map((a) => ({ account: toAccountMessage(a), partnerId: a.partnerId })),
      };
    },
    async deleteAccount(req) {
      await deleteAccount(ctx, callerOf(req.caller), req.accountId);
      return {};
    },
    async refreshAccount(req) {
      const account = await refreshAccount(ctx, callerOf(req.caller), req.accountId);
      return { accountJson: JSON.stringify(accountJson(account)) };
    },
    async deauthorize(req) {
      return { accountsRevoked: await deauthorize(ctx, req.signedRequest) };
    },
    async getAccountToken(req, call) {
      const client = vault.authorize(call);
      const account = await getVaultAccount(ctx.pool, req.accountId);
      const token = handOutToken(ctx.keyring, account);
      ctx.logger.info({ account: account.id, client }, 'token handed out');
      return { account: toAccountMessage(account), token, tokenSubject: account.pageId };
    },
    async reportTokenProblem(req, call) {
      vault.authorize(call);
      if (!isTokenProblem(req.problem))
        throw errors.validation('problem', 'problem must be expired, revoked or invalid');
      const account = await getVaultAccount(ctx.pool, req.accountId);
      const updated = await applyTokenProblem(ctx, account, req.problem, req.message, req.subcode);
      return { account: toAccountMessage(updated) };
    },
  };
}
