import { type McpServer, ResourceNotFoundError, ResourceTemplate } from '@modelcontextprotocol/server';
import { ServiceError } from '@svc/errors';
import type { ServiceClients } from '../clients.ts';
import { parseInput } from '../http/validation.ts';
import { accountCalls } from '../routes/accounts.ts';
import { conversationParams, inboxCalls } from '../routes/conversations.ts';
import { postCalls, postParams } from '../routes/posts.ts';
import type { McpCaller } from './auth.ts';

const JSON_TYPE = 'application/json';

/** One JSON document as a resource's contents. */
const contents = (uri: URL, text: string) => ({ contents: [{ uri: uri.href, mimeType: JSON_TYPE, text }] });

/**
 * Read-only views for clients that browse resources: the workspace's accounts, a post, a
 * conversation. The same service calls as the tools; an object outside the workspace is "not found".
 */
export function registerResources(server: McpServer, clients: ServiceClients, caller: McpCaller): void {
  const accounts = accountCalls(clients.accounts);
  const posts = postCalls(clients.publishing);
  const inbox = inboxCalls(clients.inbox);
  server.registerResource(
    'accounts',
    'social://workspace/accounts',
    { title: 'Connected accounts', description: "The workspace's connected accounts", mimeType: JSON_TYPE },
    async (uri) => {
      const query = { page: 1, limit: 200 };
      const { accountsJson } = await accounts.list(caller.scoped, caller.workspaceId, query);
      return contents(uri, `[${accountsJson.join(',')}]`);
    },
  );
  server.registerResource(
    'post',
    new ResourceTemplate('social://posts/{id}', { list: undefined }),
    { title: 'A post', description: 'A post and its targets', mimeType: JSON_TYPE },
    (uri, { id }) =>
      found(uri, async () => {
        const postId = parseInput(postParams, { id }, 'path').id;
        return contents(uri, (await posts.get(caller.scoped, postId)).postJson);
      }),
  );
  server.registerResource(
    'conversation',
    new ResourceTemplate('social://conversations/{id}', { list: undefined }),
    { title: 'A conversation', description: 'A conversation with its reply window', mimeType: JSON_TYPE },
    (uri, { id }) =>
      found(uri, async () => {
        const conversationId = parseInput(conversationParams, { id }, 'path').id;
        return contents(uri, (await inbox.get(caller.scoped, conversationId)).conversationJson);
      }),
  );
}

/** A read whose object is missing (or in another workspace) is the protocol's "resource not found". */
async function found<T>(uri: URL, read: () => Promise<T>): Promise<T> {
  try {
    return await read();
  } catch (error) {
    if (error instanceof ServiceError && error.code === 'not_found')
      throw new ResourceNotFoundError(uri.href);
    throw error;
  }
}
