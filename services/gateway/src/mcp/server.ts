import { Readable } from 'node:stream';
import type { ReadableStream as NodeReadableStream } from 'node:stream/web';
import {
  type AuthInfo,
  classifyInboundRequest,
  createMcpHandler,
  McpServer,
} from '@modelcontextprotocol/server';
import type { WorkspaceDirectory } from '@svc/directory';
import { errors } from '@svc/errors';
import type { Logger } from '@svc/logging';
import type { FastifyPluginAsync, FastifyReply, FastifyRequest } from 'fastify';
import type { Limiter } from '../auth/limiter.ts';
import type { ServiceClients } from '../clients.ts';
import type { Idempotency } from '../http/idempotency.ts';
import { refuseUnstorable } from '../http/validation.ts';
import type { AnyOperation } from '../operations/operation.ts';
import { type McpCaller, mcpWorkspaceBinding } from './auth.ts';
import { BatchBudget } from './batch-budget.ts';
import { exchangeRefusal, type JsonAnswer, JsonExchange } from './json-exchange.ts';
import { registerResources } from './resources.ts';
import { registerTools, type Tool, toolsOf } from './tool.ts';

/** Where the MCP endpoint answers: outside `/v1` as the spec writes it (9), and beside the REST API. */
export const MCP_PATHS = ['/mcp', '/v1/mcp'];

const INSTRUCTIONS =
  'Publish posts to connected social accounts and answer their inbox for one workspace (the key ' +
  "decides it, or X-Service-Workspace for a partner key). Refusals carry the REST API's error " +
  'envelope: { error: { code, message, field } }.';

interface McpDeps {
  limiter: Limiter;
  clients: ServiceClients;
  workspaces: WorkspaceDirectory;
  /** The operation table: the tools are its MCP doors, the resources read through it. */
  operations: AnyOperation[];
  idempotency: Idempotency;
  logger: Logger;
}

/**
 * What one request's server holds: a single `tools/call` of a known tool needs that tool alone
 * (building all of them, and the resources, for every call was a good part of a call's cost);
 * anything else (listing, reading resources, a batch, an unknown tool) gets everything, so its
 * answer is the same as a full server's.
 */
interface Needs {
  tools: Tool[];
  resources: boolean;
}

function needsOf(body: unknown, tools: Tool[], byName: Map<string, Tool>): Needs {
  const message = body as { method?: unknown; params?: { name?: unknown } } | null;
  if (message?.method === 'tools/call' && typeof message.params?.name === 'string') {
    const tool = byName.get(message.params.name);
    if (tool) return { tools: [tool], resources: false };
  }
  return { tools, resources: true };
}

/** The MCP server for one request: what it needs, bound to the request's caller. */
function serverFor(deps: McpDeps, needs: Needs, caller: McpCaller): McpServer {
  const server = new McpServer(
    { name: 'social-publishing', version: '1.0.0' },
    { instructions: INSTRUCTIONS, capabilities: { tools: {}, resources: {} } },
  );
  registerTools(server, needs.tools, caller, deps);
  if (needs.resources) registerResources(server, deps.operations, caller);
  return server;
}

/**
 * The endpoint, stateless: a new server and transport per HTTP request, no session id, so any
 * gateway replica answers any request. The 2026-07-28 revision is the SDK's `createMcpHandler`
 * (per-request by design); the 2025 revisions are a `JsonExchange` per request, answering plain
 * JSON as the handler's own stateless fallback would, without opening an SSE stream for a single
 * answer. The gateway's hook authenticates first; this scope's hook then settles the workspace.
 */
export function mcpRoutes(deps: McpDeps): FastifyPluginAsync {
  const tools = toolsOf(deps.operations);
  const byName = new Map(tools.map((tool) => [tool.door.name, tool]));
  const factory = (authInfo: AuthInfo | undefined) => {
    const { caller, needs } = exchangeOf(authInfo);
    return serverFor(deps, needs, caller);
  };
  const modern = createMcpHandler(({ authInfo }) => factory(authInfo), {
    legacy: 'reject',
    onerror: (error) => deps.logger.debug({ err: error }, 'mcp request refused'),
  });
  return async (scope) => {
    scope.addHook('onRequest', mcpWorkspaceBinding(deps.workspaces));
    scope.addHook('onClose', () => modern.close());
    for (const url of MCP_PATHS) {
      scope.route({
        method: ['GET', 'POST', 'DELETE'],
        url,
        handler: async (request, reply) => {
          const caller = request.mcpCaller;
          if (!caller) throw errors.unauthorized();
          // Bounded before the SDK walks it (a message nested thousands deep overflowed its stack).
          if (request.body !== undefined) refuseUnstorable(request.body, 'body');
          const authInfo = authInfoOf(caller, needsOf(request.body, tools, byName));
          if (isLegacy(request)) {
            const budget = await BatchBudget.charge(request.body, caller, deps.limiter);
            const answer = await legacy(() => factory(authInfo), request, budget.body, authInfo);
            return sendJson(reply, budget.merge(request.body, answer));
          }
          const web = webRequest(request, reply);
          return send(reply, await modern.fetch(web, { parsedBody: request.body, authInfo }));
        },
      });
    }
  };
}

/**
 * Whether a request is of the 2025 era, decided as the SDK's `isLegacyRequest` decides it (the
 * SDK's own classifier), from the Fastify request: no web `Request` needed for it.
 */
function isLegacy(request: FastifyRequest): boolean {
  if (request.body === undefined) return true;
  const outcome = classifyInboundRequest({
    httpMethod: request.method,
    protocolVersionHeader: header(request, 'mcp-protocol-version'),
    mcpMethodHeader: header(request, 'mcp-method'),
    mcpNameHeader: header(request, 'mcp-name'),
    body: request.body,
  });
  return outcome.kind === 'legacy';
}

/** A header as web `Headers.get` reads it: repeated values joined by ", ". */
function header(request: FastifyRequest, name: string): string | undefined {
  const value = request.headers[name];
  return Array.isArray(value) ? value.join(', ') : value;
}

/**
 * One 2025-era exchange on a server of its own. GET and DELETE (session operations) have no
 * meaning without sessions. An answered exchange leaves nothing to close: its answer comes once
 * every request in it has its response, and a stateless server holds no timer or stream (closing
 * it would only build the SDK's "connection closed" error, stack and all, for no one).
 */
async function legacy(
  newServer: () => McpServer,
  request: FastifyRequest,
  body: unknown,
  authInfo: AuthInfo,
): Promise<JsonAnswer> {
  if (request.method !== 'POST')
    return { ...exchangeRefusal(405, -32000, 'Method not allowed.'), headers: { allow: 'POST' } };
  const exchange = new JsonExchange();
  const server = newServer();
  await server.connect(exchange);
  try {
    const headers = {
      accept: header(request, 'accept'),
      protocolVersion: header(request, 'mcp-protocol-version'),
    };
    return await exchange.exchange(headers, body, authInfo);
  } catch (error) {
    await server.close();
    throw error;
  }
}

/**
 * The caller and what the request needs travel to the per-request server factory inside the SDK's
 * AuthInfo (never the key).
 */
function authInfoOf(caller: McpCaller, needs: Needs): AuthInfo {
  return { token: caller.key.keyId, clientId: caller.key.keyId, scopes: [], extra: { caller, needs } };
}

function exchangeOf(authInfo: AuthInfo | undefined): { caller: McpCaller; needs: Needs } {
  const extra = authInfo?.extra as { caller?: McpCaller; needs?: Needs } | undefined;
  if (!extra?.caller || !extra.needs) throw errors.unauthorized();
  return { caller: extra.caller, needs: extra.needs };
}

/** The Fastify request as a web Request (the body is already parsed and handed over separately). */
function webRequest(request: FastifyRequest, reply: FastifyReply): Request {
  const headers = new Headers();
  for (const [name, value] of Object.entries(request.headers)) {
    if (name === 'content-length' || value === undefined) continue;
    for (const one of Array.isArray(value) ? value : [value]) headers.append(name, one);
  }
  const aborted = new AbortController();
  // Only a client that left before its answer cancels the work (aborting after every answer made
  // the SDK build a cancellation error per request).
  reply.raw.on('close', () => {
    if (!reply.raw.writableFinished) aborted.abort();
  });
  return new Request(`http://${request.host}${request.url}`, {
    method: request.method,
    headers,
    signal: aborted.signal,
  });
}

function sendJson(reply: FastifyReply, answer: JsonAnswer): FastifyReply {
  reply.code(answer.status).headers(answer.headers ?? {});
  if (answer.json === undefined) return reply.send();
  return reply.type('application/json').send(JSON.stringify(answer.json));
}

async function send(reply: FastifyReply, response: Response): Promise<FastifyReply> {
  reply.code(response.status);
  response.headers.forEach((value, name) => {
    reply.header(name, value);
  });
  if (!response.body) return reply.send();
  // A JSON answer is whole already: sent as text, without a stream's machinery per request.
  if (response.headers.get('content-type')?.startsWith('application/json'))
    return reply.send(await response.text());
  return reply.send(Readable.fromWeb(response.body as NodeReadableStream));
}
