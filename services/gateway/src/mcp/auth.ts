import type { WorkspaceDirectory } from '@svc/directory';
import { errors, ServiceError } from '@svc/errors';
import { type Id, isId } from '@svc/ids';
import type { FastifyReply, FastifyRequest, onRequestAsyncHookHandler } from 'fastify';
import { PERMISSIONS } from '../auth/permissions.ts';
import type { Principal } from '../auth/principal.ts';

/** The header naming the workspace a partner key works in over MCP (spec 4, `/mcp` row of 5). */
const WORKSPACE_HEADER = 'x-service-workspace';

/**
 * Who calls a tool: the key itself (its kind decides what is partner-only, like `/events`) and
 * `scoped`, the same caller narrowed to the one workspace of the request, which is what every
 * service call carries, so the owning services refuse objects of any other workspace (404).
 */
export interface McpCaller {
  key: Principal;
  workspaceId: Id<'workspace'>;
  scoped: Principal;
  /** The key's requests per minute: the further calls of a batch count against it too. */
  perMinute: number;
}

declare module 'fastify' {
  interface FastifyRequest {
    mcpCaller?: McpCaller;
  }
}

/**
 * What the MCP endpoint asks before any key is looked up (the gateway's one authentication hook
 * runs this first on its paths): a browser origin that is not allowed is refused (403: the
 * transport specification's defence against DNS rebinding, where a page a user visits drives a
 * local or intranet MCP server), and an embed session is refused by its prefix (403).
 */
export function admitToMcp(request: FastifyRequest, allowedOrigins: readonly string[]): void {
  const { origin } = request.headers;
  // No `Origin` (a server-side client) passes; a browser's must be one the deployment allows.
  if (origin !== undefined && !allowedOrigins.includes(origin))
    throw errors.forbidden(
      'this Origin may not call the MCP endpoint; a deployment that serves a browser client lists its origin in MCP_ALLOWED_ORIGINS',
    );
  if (request.headers.authorization?.startsWith('Bearer sve_'))
    throw errors.forbidden('an embed session cannot call the MCP endpoint; use a partner or workspace key');
}

/** RFC 6750: a refused bearer token names the scheme, so MCP clients know how to authenticate. */
export function challengeBearer(request: FastifyRequest, reply: FastifyReply, error: unknown): void {
  if (error instanceof ServiceError && error.code === 'unauthorized')
    reply.header(
      'WWW-Authenticate',
      request.headers.authorization ? 'Bearer error="invalid_token"' : 'Bearer',
    );
}

/**
 * The MCP scope's hook, after authentication: the request's workspace, settled from the key or
 * `X-Service-Workspace`, and the caller every tool runs as.
 */
export function mcpWorkspaceBinding(workspaces: WorkspaceDirectory): onRequestAsyncHookHandler {
  // The one rule every service uses for whose a workspace is (kept until identity announces a change).
  const ownsWorkspace = async (principal: Principal, workspaceId: string): Promise<boolean> => {
    try {
      await workspaces.assertOwned({ partnerId: principal.partnerId, workspaceId: '' }, workspaceId);
      return true;
    } catch (error) {
      if (error instanceof ServiceError && error.code === 'not_found') return false;
      throw error;
    }
  };

  return async (request) => {
    const { principal, rateLimit } = request;
    if (!principal || !rateLimit) throw errors.unauthorized();
    const workspaceId = await workspaceOf(request, principal, ownsWorkspace);
    request.mcpCaller = {
      key: principal,
      workspaceId,
      scoped: { ...principal, kind: 'workspace', workspaceId },
      perMinute: rateLimit.limit,
    };
  };
}

/** The request's workspace: a workspace key's own, or the partner's `X-Service-Workspace`. */
async function workspaceOf(
  request: FastifyRequest,
  principal: Principal,
  ownsWorkspace: (principal: Principal, workspaceId: string) => Promise<boolean>,
): Promise<Id<'workspace'>> {
  const named = request.headers[WORKSPACE_HEADER];
  // The `/mcp` row of the matrix: a workspace key stays in its own workspace.
  if (PERMISSIONS.mcp[principal.kind] === 'own-workspace') {
    if (named !== undefined && named !== principal.workspaceId)
      throw errors.forbidden('this workspace key can only reach its own workspace');
    return principal.workspaceId as Id<'workspace'>;
  }
  if (named === undefined)
    throw errors.validation(
      'X-Service-Workspace',
      'a partner key names its workspace in X-Service-Workspace',
    );
  if (!isId('workspace', named))
    throw errors.validation('X-Service-Workspace', 'X-Service-Workspace is not a valid workspace id');
  // Another partner's workspace and one that does not exist are refused alike: nothing leaks.
  if (!(await ownsWorkspace(principal, named)))
    throw errors.forbidden('this partner key cannot reach the workspace named in X-Service-Workspace');
  return named;
}
