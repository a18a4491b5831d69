import type { Surface } from './principal.ts';

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
 * A row with a `surface` is part of that widget surface: an embed session that was not granted it
 * gets 403 (spec 1: a session may be limited to some surfaces).
 */
type Rule = 'allow' | 'deny' | 'own-workspace' | 'own-objects';

export interface MatrixRow {
  partner: Rule;
  workspace: Rule;
  embed: Rule;
  surface?: Surface;
}

const embedSurface = (surface: Surface) =>
  ({ partner: 'deny', workspace: 'deny', embed: 'own-objects', surface }) as const;

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
  /** /embed/accounts, /embed/connect */
  embedConnect: embedSurface('connect'),
  /** /embed/conversations, /embed/messages */
  embedInbox: embedSurface('inbox'),
  /** /embed/media, /embed/posts */
  embedPublish: embedSurface('publish'),
} as const satisfies Record<string, MatrixRow>;

export type PermissionRow = keyof typeof PERMISSIONS;
