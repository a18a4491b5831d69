import { accountView, publishingLimitView } from '@svc/contracts/public';
import type { ServiceClients } from '../../clients.ts';
import { jsonText, pagedJsonText } from '../../http/json-text.ts';
import { paged } from '../../http/schemas.ts';
import {
  accountCalls,
  accountListQuery,
  accountParams,
  connectLinkBody,
  connectLinkView,
} from '../../routes/accounts.ts';
import { postCalls } from '../../routes/posts.ts';
import { type AnyTool, defineTool, noArgs } from '../tool.ts';

const account = { arg: 'account_id', params: accountParams };

/** Accounts of the request's workspace: list, read, refresh, connect more, publishing limit. */
export function accountTools(clients: ServiceClients): AnyTool[] {
  const accounts = accountCalls(clients.accounts);
  const posts = postCalls(clients.publishing);
  return [
    defineTool({
      name: 'list_accounts',
      title: 'List connected accounts',
      description:
        'List the social accounts connected to this workspace (photo_network profiles and page_network pages), with their status (active, expired, revoked, error). Use an account id as a post target.',
      input: accountListQuery,
      output: paged(accountView),
      readOnly: true,
      async run({ caller, args }) {
        const { accountsJson, total } = await accounts.list(caller.scoped, caller.workspaceId, args);
        return pagedJsonText(accountsJson, args.page, args.limit, total);
      },
    }),
    defineTool({
      name: 'get_account',
      title: 'Read an account',
      description: 'Read one connected account: network, username, status, last error, granted scopes.',
      id: account,
      input: noArgs,
      output: accountView,
      readOnly: true,
      run: async ({ caller, id }) => jsonText((await accounts.get(caller.scoped, id)).accountJson),
    }),
    defineTool({
      name: 'refresh_account',
      title: 'Refresh an account',
      description:
        'Ask the network now for the profile, permissions and token health of an account; answers the updated account.',
      id: account,
      input: noArgs,
      output: accountView,
      run: async ({ caller, id }) => jsonText((await accounts.refresh(caller.scoped, id)).accountJson),
    }),
    defineTool({
      name: 'create_connect_link',
      title: 'Create a connect link',
      description:
        'Create a link to the hosted connect page for this workspace. Send the end user to `url`: they grant access at the network and their accounts appear in list_accounts.',
      input: connectLinkBody,
      output: connectLinkView,
      run: ({ caller, args }) => accounts.createConnectLink(caller.scoped, caller.workspaceId, args),
    }),
    defineTool({
      name: 'get_publishing_limit',
      title: 'Publishing limit of an account',
      description:
        "A photo_network account's rolling 24-hour publishing limit: limit, used, remaining and the next free slot.",
      id: account,
      input: noArgs,
      output: publishingLimitView,
      readOnly: true,
      run: async ({ caller, id }) => jsonText((await posts.publishingLimit(caller.scoped, id)).limitJson),
    }),
  ];
}
