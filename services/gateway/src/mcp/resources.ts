import { type McpServer, ResourceNotFoundError, ResourceTemplate } from '@modelcontextprotocol/server';
import { ServiceError } from '@svc/errors';
import { parseInput } from '../http/validation.ts';
import { type AnyOperation, perform } from '../operations/operation.ts';
import type { McpCaller } from './auth.ts';

const JSON_TYPE = 'application/json';

/** One JSON document as a resource's contents. */
const contents = (uri: URL, text: string) => ({ contents: [{ uri: uri.href, mimeType: JSON_TYPE, text }] });

/** A read of the table's operation `METHOD /path`, as the request's caller, answering its JSON text. */
function reader(operations: AnyOperation[], caller: McpCaller, name: string) {
  const operation = operations.find((o) => `${o.method} ${o.url}` === name);
  if (!operation) throw new Error(`no operation ${name}`);
  return async (params: Record<string, unknown>, query: Record<string, unknown> = {}) => {
    const checked =
      params.id === undefined ? {} : parseInput<Record<string, unknown>>(operation.params, params, 'path');
    const ctx = { principal: caller.scoped, origin: 'mcp' as const, query, body: {}, idempotency: undefined };
    return (await perform(operation, { ...ctx, params: checked })).text;
  };
}

/**
 * Read-only views for clients that browse resources: the workspace's accounts, a post, a
 * conversation. The same operations as the tools; an object outside the workspace is "not found".
 */
export function registerResources(server: McpServer, operations: AnyOperation[], caller: McpCaller): void {
  const accounts = reader(operations, caller, 'GET /v1/workspaces/:id/accounts');
  const post = reader(operations, caller, 'GET /v1/posts/:id');
  const conversation = reader(operations, caller, 'GET /v1/conversations/:id');
  server.registerResource(
    'accounts',
    'social://workspace/accounts',
    { title: 'Connected accounts', description: "The workspace's connected accounts", mimeType: JSON_TYPE },
    async (uri) => {
      const page = JSON.parse(await accounts({ id: caller.workspaceId }, { page: 1, limit: 200 }));
      return contents(uri, JSON.stringify(page.data));
    },
  );
  server.registerResource(
    'post',
    new ResourceTemplate('social://posts/{id}', { list: undefined }),
    { title: 'A post', description: 'A post and its targets', mimeType: JSON_TYPE },
    (uri, { id }) => found(uri, async () => contents(uri, await post({ id }))),
  );
  server.registerResource(
    'conversation',
    new ResourceTemplate('social://conversations/{id}', { list: undefined }),
    { title: 'A conversation', description: 'A conversation with its reply window', mimeType: JSON_TYPE },
    (uri, { id }) => found(uri, async () => contents(uri, await conversation({ id }))),
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
