import { accountView, connectLinkView, network } from '@svc/contracts/public';
import { z } from 'zod';
import { grpcCaller } from '../auth/principal.ts';
import type { AccountsClient } from '../clients.ts';
import { jsonText, pagedJsonText } from '../http/json-text.ts';
import { paged, pagination, pathId } from '../http/schemas.ts';
import { type AnyOperation, defineOperation } from './operation.ts';

const workspaceParams = z.strictObject({ id: pathId('workspace', 'workspace') });
export const accountParams = z.strictObject({ id: pathId('account', 'account') });

const connectLinkBody = z.strictObject({
  networks: z.array(network).min(1).max(2).optional().describe('networks to offer; both by default'),
  redirect_url: z
    .string()
    .max(2000)
    .optional()
    .describe('where the user returns afterwards, with status and account ids (https, or http on localhost)'),
  expires_in: z.number().int().min(60).max(604_800).optional().describe('seconds; default 86400'),
});

const accountListQuery = z.strictObject({
  ...pagination,
  network: network.optional(),
  status: z.enum(['active', 'expired', 'revoked', 'error']).optional(),
});

const accountTool = { idArg: 'account_id' };

/** Accounts: connect links, the accounts of a workspace, one account, disconnect, refresh. */
export function accountOperations(accounts: AccountsClient): AnyOperation[] {
  return [
    defineOperation({
      method: 'POST',
      url: '/v1/workspaces/:id/connect-links',
      summary: 'Create a link to the hosted connect page, where the end user connects accounts',
      permission: 'workspaceChildren',
      params: workspaceParams,
      workspaceIn: 'params',
      body: connectLinkBody,
      status: 201,
      response: connectLinkView,
      tools: [
        {
          name: 'create_connect_link',
          title: 'Create a connect link',
          description:
            'Create a link to the hosted connect page for this workspace. Send the end user to `url`: they grant access at the network and their accounts appear in list_accounts.',
        },
      ],
      async run({ principal, params, body }) {
        const { linkJson } = await accounts.createConnectLink({
          caller: grpcCaller(principal),
          workspaceId: params.id,
          networks: body.networks ?? [],
          redirectUrl: body.redirect_url ?? '',
          expiresInSeconds: body.expires_in ?? 0,
        });
        return jsonText(linkJson);
      },
    }),
    defineOperation({
      method: 'GET',
      url: '/v1/workspaces/:id/accounts',
      summary: 'List the accounts connected to a workspace',
      permission: 'workspaceChildren',
      params: workspaceParams,
      workspaceIn: 'params',
      query: accountListQuery,
      status: 200,
      response: paged(accountView),
      widget: { url: '/v1/embed/accounts', permission: 'embedAccounts' },
      tools: [
        {
          name: 'list_accounts',
          title: 'List connected accounts',
          description:
            'List the social accounts connected to this workspace (photo_network profiles and page_network pages), with their status (active, expired, revoked, error). Use an account id as a post target.',
          readOnly: true,
        },
      ],
      async run({ principal, params, query }) {
        const { accountsJson, total } = await accounts.listAccounts({
          caller: grpcCaller(principal),
          workspaceId: params.id,
          network: query.network ?? '',
          status: query.status ?? '',
          page: query.page,
          limit: query.limit,
        });
        return pagedJsonText(accountsJson, query.page, query.limit, total);
      },
    }),
    defineOperation({
      method: 'GET',
      url: '/v1/accounts/:id',
      summary: 'Read an account (the network token is never returned)',
      permission: 'objects',
      params: accountParams,
      status: 200,
      response: accountView,
      tools: [
        {
          ...accountTool,
          name: 'get_account',
          title: 'Read an account',
          description: 'Read one connected account: network, username, status, last error, granted scopes.',
          readOnly: true,
        },
      ],
      async run({ principal, params }) {
        const { accountJson } = await accounts.getAccount({
          caller: grpcCaller(principal),
          accountId: params.id,
        });
        return jsonText(accountJson);
      },
    }),
    defineOperation({
      method: 'DELETE',
      url: '/v1/accounts/:id',
      summary:
        'Disconnect an account: its token and metadata are removed; posts and conversations keep their history',
      permission: 'objects',
      params: accountParams,
      status: 204,
      widget: { url: '/v1/embed/accounts/:id', permission: 'embedConnect' },
      async run({ principal, params }) {
        await accounts.deleteAccount({ caller: grpcCaller(principal), accountId: params.id });
      },
    }),
    defineOperation({
      method: 'POST',
      url: '/v1/accounts/:id/refresh',
      summary: 'Ask the network now for the profile, permissions and token health of an account',
      permission: 'objects',
      params: accountParams,
      status: 200,
      response: accountView,
      tools: [
        {
          ...accountTool,
          name: 'refresh_account',
          title: 'Refresh an account',
          description:
            'Ask the network now for the profile, permissions and token health of an account; answers the updated account.',
        },
      ],
      async run({ principal, params }) {
        const { accountJson } = await accounts.refreshAccount({
          caller: grpcCaller(principal),
          accountId: params.id,
        });
        return jsonText(accountJson);
      },
    }),
  ];
}
