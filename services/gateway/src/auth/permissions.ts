import type { EmbedSurface } from '@svc/contracts/public';
import { errors } from '@svc/errors';
import type { Principal } from './principal.ts';

/**
 * The permission matrix of spec section 5, as one table. Every route names its row; the tests in
 * test/permissions.test.ts and test/permissions-embed.test.ts walk every route against every kind
 * of caller.
 *
 * Per caller kind:
 *  - allow: may call;
 *  - deny: 403 forbidden;
 *  - own-workspace: a workspace key may call only with its own workspace in the path (else 403);
 *  - own-objects: a workspace key or embed session reaches only objects of its workspace (others
 *    are 404, the owning service filters by the caller's workspace).
 * A row with `surfaces` belongs to those widget surfaces: an embed session granted none of them gets
 * 403 (spec 1: a session may be limited to some surfaces). The account list belongs to two: the
 * connect surface shows it and the publish surface picks its targets from it.
 */
type Rule = 'allow' | 'deny' | 'own-workspace' | 'own-objects';

export interface MatrixRow {
  partner: Rule;
  workspace: Rule;
  embed: Rule;
  surfaces?: readonly EmbedSurface[];
}

const embedSurface = (...surfaces: EmbedSurface[]) =>
  ({ partner: 'deny', workspace: 'deny', embed: 'own-objects', surfaces }) as const;

export const PERMISSIONS = {
  /** POST, GET /workspaces */
  workspaces: { partner: 'allow', workspace: 'deny', embed: 'deny' },
  /** GET, PATCH, DELETE /workspaces/:id */
  workspace: { partner: 'allow', workspace: 'own-workspace', embed: 'deny' },
  /** /workspaces/:id/keys */
  workspaceKeys: { partner: 'allow', workspace: 'deny', embed: 'deny' },
  /** /workspaces/:id/connect-links, /workspaces/:id/accounts */
  workspaceChildren: { partner: 'allow', workspace: 'own-workspace', embed: 'deny' },
  /** /accounts/:id, /media, /posts, /conversations */
  objects: { partner: 'allow', workspace: 'own-objects', embed: 'deny' },
  /** /webhook, /webhook/test, /events, /embed-sessions */
  partnerOnly: { partner: 'allow', workspace: 'deny', embed: 'deny' },
  /** /mcp: a partner key names the workspace in X-Service-Workspace; a workspace key works in its own */
  mcp: { partner: 'allow', workspace: 'own-workspace', embed: 'deny' },
  /** /embed/session and /embed/stream: any surface */
  embed: { partner: 'deny', workspace: 'deny', embed: 'own-objects' },
  /** /embed/connect, DELETE /embed/accounts/:id */
  embedConnect: embedSurface('connect'),
  /** GET /embed/accounts */
  embedAccounts: embedSurface('connect', 'publish'),
  /** /embed/conversations, /embed/messages */
  embedInbox: embedSurface('inbox'),
  /** /embed/media, /embed/posts */
  embedPublish: embedSurface('publish'),
} as const satisfies Record<string, MatrixRow>;

export type PermissionRow = keyof typeof PERMISSIONS;

/**
 * Applies the matrix row to the caller; own-objects scoping is done by the owning service.
 * `pathWorkspace` is the `:id` of a `/v1/workspaces/:id/...` path; `namedWorkspace` is the
 * `workspace` a request names in its query or body (`GET /v1/media?workspace=`): that is a
 * workspace, not an object in one, so on an own-objects row a workspace key naming another
 * workspace is forbidden (403), as on an own-workspace row.
 */
export function enforcePermission(
  row: PermissionRow,
  principal: Principal,
  pathWorkspace: unknown,
  namedWorkspace?: unknown,
): void {
  const matrix: MatrixRow = PERMISSIONS[row];
  const rule = matrix[principal.kind];
  if (rule === 'deny') throw errors.forbidden(`${CALLER_NAMES[principal.kind]} cannot call this endpoint`);
  if (rule === 'own-workspace' && pathWorkspace !== principal.workspaceId) {
    throw errors.forbidden('this workspace key can only reach its own workspace');
  }
  if (
    rule === 'own-objects' &&
    typeof namedWorkspace === 'string' &&
    namedWorkspace !== principal.workspaceId
  ) {
    throw errors.forbidden(`${CALLER_NAMES[principal.kind]} can only reach its own workspace`);
  }
  const granted = principal.embed?.surfaces;
  if (matrix.surfaces && granted && !matrix.surfaces.some((surface) => granted.includes(surface))) {
    throw errors.forbidden(`this embed session was not granted the ${matrix.surfaces.join(' or ')} surface`);
  }
}

const CALLER_NAMES: Record<Principal['kind'], string> = {
  partner: 'a partner key',
  workspace: 'a workspace key',
  embed: 'an embed session',
};
