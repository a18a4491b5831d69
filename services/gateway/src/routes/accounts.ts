import { accountView, network } from '@svc/contracts/public';
import { z } from 'zod';
import { grpcCaller, type Principal } from '../auth/principal.ts';
import type { AccountsClient } from '../clients.ts';
import { jsonText, pagedJsonText } from '../http/json-text.ts';
import { type AnyRoute, defineRoute } from '../http/route.ts';
import { paged, pagination, pathId, timestamp } from '../http/schemas.ts';

export const connectLinkView = z
  .object({
    id: z.string(),
    workspace: z.string(),
    url: z.string().describe('the hosted connect page; send the end user here'),
    networks: z.array(network),
    redirect_url: z.string().nullable(),
    expires_at: timestamp,
    created: timestamp,
  })
  .meta({ id: 'ConnectLink' });

const workspaceParams = z.strictObject({ id: pathId('workspace', 'workspace') });
export const accountParams = z.strictObject({ id: pathId('account', 'account') });

/** The request schemas of the account routes, shared with the MCP tools that mirror them. */
export const connectLinkBody = z.strictObject({
  networks: z.array(network).min(1).max(2).optional().describe('networks to offer; both by default'),
  redirect_url: z
    .string()
    .max(2000)
    .optional()
    .describe('where the user returns afterwards, with status and account ids (https, or http on localhost)'),
  expires_in: z.number().int().min(60).max(604_800).optional().describe('seconds; default 86400'),
});

export const accountListQuery = z.strictObject({
  ...pagination,
  network: network.optional(),
  status: z.enum(['active', 'expired', 'revoked', 'error']).optional(),
});

/** The accounts calls behind REST, the widget and MCP, so all answer with the same records. */
export function accountCalls(accounts: AccountsClient) {
  return {
    async createConnectLink(
      principal: Principal,
      workspaceId: string,
      body: z.infer<typeof connectLinkBody>,
    ): Promise<z.infer<typeof connectLinkView>> {
      const { link } = await accounts.createConnectLink({
        caller: grpcCaller(principal),
        workspaceId,
        networks: body.networks ?? [],
        redirectUrl: body.redirect_url ?? '',
        expiresInSeconds: body.expires_in ?? 0,
      });
      if (!link) throw new Error('accounts returned no link');
      return {
        id: link.id,
        workspace: link.workspaceId,
        url: link.url,
        networks: link.networks as z.infer<typeof network>[],
        redirect_url: link.redirectUrl || null,
        expires_at: link.expiresAt,
        created: link.createdAt,
      };
    },
    list: (principal: Principal, workspaceId: string, query: z.infer<typeof accountListQuery>) =>
      accounts.listAccounts({
        caller: grpcCaller(principal),
        workspaceId,
        network: query.network ?? '',
        status: query.status ?? '',
        page: query.page,
        limit: query.limit,
      }),
    get: (principal: Principal, accountId: string) =>
      accounts.getAccount({ caller: grpcCaller(principal), accountId }),
    refresh: (principal: Principal, accountId: string) =>
      accounts.refreshAccount({ caller: grpcCaller(principal), accountId }),
  };
}

export function accountRoutes(accounts: AccountsClient): AnyRoute[] {
  const calls = accountCalls(accounts);
  return [
    defineRoute({
      method: 'POST',
      url: '/v1/workspaces/:id/connect-links',
      summary: 'Create a link to the hosted connect page, where the end user connects accounts',
      permission: 'workspaceChildren',
      params: workspaceParams,
      body: connectLinkBody,
      status: 201,
      response: connectLinkView,
      handler: ({ principal, params, body }) => calls.createConnectLink(principal, params.id, body),
    }),
    defineRoute({
      method: 'GET',
      url: '/v1/workspaces/:id/accounts',
      summary: 'List the accounts connected to a workspace',
      permission: 'workspaceChildren',
      params: workspaceParams,
      query: accountListQuery,
      status: 200,
      response: paged(accountView),
      async handler({ principal, params, query }) {
        const { accountsJson, total } = await calls.list(principal, params.id, query);
        return pagedJsonText(accountsJson, query.page, query.limit, total);
      },
    }),
    defineRoute({
      method: 'GET',
      url: '/v1/accounts/:id',
      summary: 'Read an account (the network token is never returned)',
      permission: 'objects',
      params: accountParams,
      status: 200,
      response: accountView,
      async handler({ principal, params }) {
        return jsonText((await calls.get(principal, params.id)).accountJson);
      },
    }),
    defineRoute({
      method: 'DELETE',
      url: '/v1/accounts/:id',
      summary:
        'Disconnect an account: its token and metadata are removed; posts and conversations keep their history',
      permission: 'objects',
      params: accountParams,
      status: 204,
      async handler({ principal, params }) {
        await accounts.deleteAccount({ caller: grpcCaller(principal), accountId: params.id });
      },
    }),
    defineRoute({
      method: 'POST',
      url: '/v1/accounts/:id/refresh',
      summary: 'Ask the network now for the profile, permissions and token health of an account',
      permission: 'objects',
      params: accountParams,
      status: 200,
      response: accountView,
      async handler({ principal, params }) {
        return jsonText((await calls.refresh(principal, params.id)).accountJson);
      },
    }),
  ];
}
