import type { AuthCache } from '@svc/auth-cache';
import type { OutboxRelay } from '@svc/bus';
import type {
  EmbedSession as EmbedSessionMessage,
  IdentityService,
  ServiceImplementation,
  Workspace,
} from '@svc/contracts';
import { errors } from '@svc/errors';
import type pg from 'pg';
import { viewOfApiKey, viewOfCreatedApiKey } from './api-key-view.ts';
import { authenticate, createApiKey, listApiKeys, revokeApiKey } from './api-keys.ts';
import type { Db } from './db.ts';
import { viewOfCreatedEmbedSession, viewOfEmbedSession } from './embed-session-view.ts';
import {
  authenticateEmbed,
  checkEmbedSessionInput,
  createEmbedSession,
  describeEmbedSession,
  endEmbedSession,
  listEmbedSessions,
} from './embed-sessions.ts';
import type { EmbedSession } from './generated/prisma/client.ts';
import { recordRequests } from './request-logs.ts';
import { viewOfWorkspace } from './workspace-view.ts';
import {
  createWorkspace,
  deleteWorkspace,
  describeWorkspace,
  getWorkspace,
  type LiveWorkspace,
  listWorkspaces,
  readWorkspace,
  updateWorkspace,
} from './workspaces.ts';

type WorkspaceInit = Omit<Workspace, '$typeName' | '$unknown'>;
type EmbedSessionInit = Omit<EmbedSessionMessage, '$typeName' | '$unknown'>;

function toWorkspaceMessage(row: LiveWorkspace): WorkspaceInit {
  return {
    id: row.id,
    partnerId: row.partnerId,
    externalId: row.externalId ?? undefined,
    name: row.name,
    timezone: row.timezone,
    settingsJson: JSON.stringify(row.settings ?? {}),
    createdAt: row.createdAt.toISOString(),
    updatedAt: row.updatedAt.toISOString(),
  };
}

function toEmbedSessionMessage(row: EmbedSession): EmbedSessionInit {
  return {
    id: row.id,
    partnerId: row.partnerId,
    workspaceId: row.workspaceId,
    surfaces: row.surfaces,
    allowedOrigins: row.allowedOrigins,
    expiresAt: row.expiresAt.toISOString(),
    createdAt: row.createdAt.toISOString(),
    endedAt: row.endedAt?.toISOString() ?? '',
  };
}

const workspaceJson = (row: LiveWorkspace) => JSON.stringify(viewOfWorkspace(row));

function parseSettings(json: string): Record<string, unknown> {
  const value: unknown = JSON.parse(json || '{}');
  if (typeof value !== 'object' || value === null || Array.isArray(value)) {
    throw errors.validation('settings', 'settings must be a JSON object');
  }
  return value as Record<string, unknown>;
}

export interface IdentityOptions {
  /** Development: embed sessions may allow http origins on loopback (as webhook URLs may). */
  allowLoopbackOrigins: boolean;
}

export function identityHandlers(
  db: Db,
  pool: pg.Pool,
  cache: AuthCache,
  relay: OutboxRelay,
  options: IdentityOptions,
): ServiceImplementation<typeof IdentityService> {
  return {
    async authenticate({ tokenHash, embedSession }) {
      const p = await (embedSession ? authenticateEmbed : authenticate)(db, cache, tokenHash);
      return {
        principal: {
          keyId: p.key_id,
          partnerId: p.partner_id,
          partnerSlug: p.partner_slug,
          workspaceId: p.workspace_id ?? '',
          rateLimitPerMinute: p.rate_limit_per_minute,
          surfaces: p.embed?.surfaces ?? [],
          expiresAt: p.embed ? new Date(p.embed.expires_at_ms).toISOString() : '',
        },
      };
    },
    async createWorkspace(req) {
      const { workspace, created } = await createWorkspace(db, req.partnerId, {
        externalId: req.externalId,
        name: req.name,
        timezone: req.timezone,
        settings: parseSettings(req.settingsJson),
      });
      return { workspace: toWorkspaceMessage(workspace), created, workspaceJson: workspaceJson(workspace) };
    },
    async listWorkspaces(req) {
      const { workspaces, total } = await listWorkspaces(db, req.partnerId, req);
      return { workspacesJson: workspaces.map(workspaceJson), total };
    },
    async getWorkspace(req) {
      const workspace = await readWorkspace(pool, req.partnerId, req.workspaceId);
      return { workspaceJson: workspaceJson(workspace) };
    },
    async describeWorkspace(req) {
      const { workspace, partnerSlug } = await describeWorkspace(pool, req.workspaceId);
      return { workspace: toWorkspaceMessage(workspace), partnerSlug };
    },
    async updateWorkspace(req) {
      const workspace = await updateWorkspace(db, req.partnerId, req.workspaceId, {
        name: req.name,
        timezone: req.timezone,
        settings: req.settingsJson === undefined ? undefined : parseSettings(req.settingsJson),
        externalId: req.clearExternalId ? null : req.externalId,
      });
      relay.kick();
      return { workspaceJson: workspaceJson(workspace) };
    },
    async deleteWorkspace(req) {
      await deleteWorkspace(db, cache, req.partnerId, req.workspaceId);
      relay.kick();
      return {};
    },
    async createApiKey(req) {
      await getWorkspace(db, req.partnerId, req.workspaceId);
      const { key, plainKey } = await createApiKey(db, req.partnerId, req.workspaceId, req.label);
      // In the gateways' cache from the start: a new key's first requests need no lookup, so they
      // pass even from an address throttled for failed authentications.
      await authenticate(db, cache, key.hash);
      return { keyJson: JSON.stringify(viewOfCreatedApiKey(key, plainKey)) };
    },
    async listApiKeys(req) {
      await getWorkspace(db, req.partnerId, req.workspaceId);
      const { keys, total } = await listApiKeys(db, req.partnerId, req.workspaceId, req);
      return { keysJson: keys.map((key) => JSON.stringify(viewOfApiKey(key))), total };
    },
    async revokeApiKey(req) {
      await getWorkspace(db, req.partnerId, req.workspaceId);
      await revokeApiKey(db, cache, {
        id: req.keyId,
        partnerId: req.partnerId,
        workspaceId: req.workspaceId,
      });
      return {};
    },
    async createEmbedSession(req) {
      const input = checkEmbedSessionInput(req, options.allowLoopbackOrigins);
      await getWorkspace(db, req.partnerId, req.workspaceId);
      const { session, plainToken } = await createEmbedSession(db, req.partnerId, req.workspaceId, input);
      return { sessionJson: JSON.stringify(viewOfCreatedEmbedSession(session, plainToken)) };
    },
    async listEmbedSessions(req) {
      if (req.workspaceId) await getWorkspace(db, req.partnerId, req.workspaceId);
      const { sessions, total } = await listEmbedSessions(db, req.partnerId, req);
      return { sessionsJson: sessions.map((session) => JSON.stringify(viewOfEmbedSession(session))), total };
    },
    async endEmbedSession(req) {
      await endEmbedSession(db, cache, req.partnerId, req.sessionId);
      relay.kick();
      return {};
    },
    async describeEmbedSession(req) {
      const { session, live } = await describeEmbedSession(db, req.sessionId);
      return { session: toEmbedSessionMessage(session), live };
    },
    async recordRequests(req) {
      await recordRequests(pool, req.entries);
      return {};
    },
  };
}
