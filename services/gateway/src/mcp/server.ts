import { Readable } from 'node:stream';
import type { ReadableStream as NodeReadableStream } from 'node:stream/web';
import {
  type AuthInfo,
  createMcpHandler,
  isLegacyRequest,
  McpServer,
  WebStandardStreamableHTTPServerTransport,
} from '@modelcontextprotocol/server';
import { errors } from '@svc/errors';
import type { Logger } from '@svc/logging';
import type { FastifyPluginAsync, FastifyReply, FastifyRequest } from 'fastify';
import type { Limiter } from '../auth/limiter.ts';
import type { ServiceClients } from '../clients.ts';
import { type McpCaller, mcpAuthentication } from './auth.ts';
import { registerResources } from './resources.ts';
import type { AnyTool } from './tool.ts';
import { registerTools } from './tool.ts';
import { accountTools } from './tools/accounts.ts';
import { eventTools } from './tools/events.ts';
import { inboxTools } from './tools/inbox.ts';
import { mediaTools } from './tools/media.ts';
import { postTools } from './tools/posts.ts';

/** Where the MCP endpoint answers: outside `/v1` as the spec writes it (9), and beside the REST API. */
export const MCP_PATHS = ['/mcp', '/v1/mcp'];

const INSTRUCTIONS =
  'Publish posts to connected social accounts and answer their inbox for one workspace (the key ' +
  "decides it, or X-Service-Workspace for a partner key). Refusals carry the REST API's error " +
  'envelope: { error: { code, message, field } }.';

interface McpDeps {
  limiter: Limiter;
  clients: ServiceClients;
  logger: Logger;
}

/** Every tool, built once: a tool holds the service clients, never a caller. */
function mcpTools(clients: ServiceClients): AnyTool[] {
  return [
    ...accountTools(clients),
    ...mediaTools(clients),
    ...postTools(clients),
    ...inboxTools(clients),
    ...eventTools(clients),
  ];
}

/** The MCP server for one request: its tools and resources bound to the request's caller. */
function serverFor(deps: McpDeps, tools: AnyTool[], caller: McpCaller): McpServer {
  const server = new McpServer(
    { name: 'social-publishing', version: '1.0.0' },
    { instructions: INSTRUCTIONS, capabilities: { tools: {}, resources: {} } },
  );
  registerTools(server, tools, caller, deps.logger);
  registerResources(server, deps.clients, caller);
  return server;
}

/**
 * The endpoint, stateless: a new server and transport per HTTP request, no session id, so any
 * gateway replica answers any request. The 2026-07-28 revision is the SDK's `createMcpHandler`
 * (per-request by design); the 2025 revisions are the SDK's stateless Streamable HTTP transport
 * (`sessionIdGenerator: undefined`) answering plain JSON, as the handler's own fallback does but
 * without opening an SSE stream for a single answer. Authentication runs first, in this scope's
 * onRequest hook.
 */
export function mcpRoutes(deps: McpDeps): FastifyPluginAsync {
  const tools = mcpTools(deps.clients);
  const factory = (authInfo: AuthInfo | undefined) => serverFor(deps, tools, callerOf(authInfo));
  const modern = createMcpHandler(({ authInfo }) => factory(authInfo), {
    legacy: 'reject',
    onerror: (error) => deps.logger.debug({ err: error }, 'mcp request refused'),
  });
  const answer = async (request: Request, body: unknown, authInfo: AuthInfo): Promise<Response> => {
    if (!(await isLegacyRequest(request, body))) return modern.fetch(request, { parsedBody: body, authInfo });
    return legacy(() => factory(authInfo), request, body, authInfo);
  };
  return async (scope) => {
    scope.addHook('onRequest', mcpAuthentication({ limiter: deps.limiter, identity: deps.clients.identity }));
    scope.addHook('onClose', () => modern.close());
    for (const url of MCP_PATHS) {
      scope.route({
        method: ['GET', 'POST', 'DELETE'],
        url,
        handler: async (request, reply) => {
          const caller = request.mcpCaller;
          if (!caller) throw errors.unauthorized();
          return send(reply, await answer(webRequest(request, reply), request.body, authInfoOf(caller)));
        },
      });
    }
  };
}

/** One 2025-era exchange: GET and DELETE (session operations) have no meaning without sessions. */
async function legacy(
  newServer: () => McpServer,
  request: Request,
  body: unknown,
  authInfo: AuthInfo,
): Promise<Response> {
  if (request.method !== 'POST') {
    const refusal = { jsonrpc: '2.0', error: { code: -32000, message: 'Method not allowed.' }, id: null };
    return Response.json(refusal, { status: 405, headers: { allow: 'POST' } });
  }
  const transport = new WebStandardStreamableHTTPServerTransport({
    sessionIdGenerator: undefined,
    enableJsonResponse: true,
  });
  const server = newServer();
  await server.connect(transport);
  try {
    return await transport.handleRequest(request, { parsedBody: body, authInfo });
  } finally {
    await transport.close();
    await server.close();
  }
}

/** The caller travels to the per-request server factory inside the SDK's AuthInfo (never the key). */
function authInfoOf(caller: McpCaller): AuthInfo {
  return { token: caller.key.keyId, clientId: caller.key.keyId, scopes: [], extra: { caller } };
}

function callerOf(authInfo: AuthInfo | undefined): McpCaller {
  const caller = authInfo?.extra?.caller as McpCaller | undefined;
  if (!caller) throw errors.unauthorized();
  return caller;
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
