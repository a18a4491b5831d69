import type { AuthCache } from '@svc/auth-cache';
import { eventRow, makeEvent, SIGNALS, writeOutbox } from '@svc/bus';
import { type Fields, found, isUniqueViolation, ONE_SNAPSHOT, pageWindow, selectList } from '@svc/db';
import { errors } from '@svc/errors';
import { newId } from '@svc/ids';
import type pg from 'pg';
import type { Db } from './db.ts';
import { endWorkspaceSessions } from './embed-sessions.ts';
import { Prisma, type Workspace as WorkspaceRow } from './generated/prisma/client.ts';

export interface WorkspaceInput {
  externalId?: string | undefined;
  name: string;
  timezone: string;
  settings: Record<string, unknown>;
}

export interface WorkspacePatch {
  name?: string | undefined;
  timezone?: string | undefined;
  settings?: Record<string, unknown> | undefined;
  /** undefined: unchanged; null: cleared. */
  externalId?: string | null | undefined;
}

function assertTimezone(timezone: string): void {
  try {
    new Intl.DateTimeFormat('en-US', { timeZone: timezone });
  } catch {
    throw errors.validation(
      'timezone',
      `"${timezone}" is not an IANA time zone (for example "Europe/Paris")`,
    );
  }
}

const live = (partnerId: string) => ({ partnerId, deletedAt: null });

/** A workspace that is not deleted: it has a name, a time zone and settings, which tombstones lack. */
export type LiveWorkspace = WorkspaceRow & { name: string; timezone: string; settings: Prisma.JsonValue };

/**
 * A row read as live (`deleted_at IS NULL`), typed as one. The CHECK constraint on the table
 * makes the throw unreachable; it is there so a tombstone can never pass as a workspace.
 */
function alive(row: WorkspaceRow): LiveWorkspace {
  if (row.deletedAt || row.name === null || row.timezone === null || row.settings === null)
    throw new Error(`workspace ${row.id} is deleted`);
  return row as LiveWorkspace;
}

/**
 * Creates a workspace, or returns the partner's existing one with that external_id. Concurrent
 * creates race on the unique (partner_id, external_id) index: the loser reads the winner's row.
 */
export async function createWorkspace(
  db: Db,
  partnerId: string,
  input: WorkspaceInput,
): Promise<{ workspace: LiveWorkspace; created: boolean }> {
  assertTimezone(input.timezone);
  if (input.externalId !== undefined) {
    const existing = await db.workspace.findFirst({
      where: { ...live(partnerId), externalId: input.externalId },
    });
    if (existing) return { workspace: alive(existing), created: false };
  }
  try {
    const workspace = await db.workspace.create({
      data: {
        id: newId('workspace'),
        partnerId,
        externalId: input.externalId ?? null,
        name: input.name,
        timezone: input.timezone,
        settings: input.settings as Prisma.InputJsonObject,
      },
    });
    return { workspace: alive(workspace), created: true };
  } catch (error) {
    if (!isUniqueViolation(error) || input.externalId === undefined) throw error;
    const winner = await db.workspace.findFirst({
      where: { ...live(partnerId), externalId: input.externalId },
    });
    return { workspace: alive(found(winner, 'workspace')), created: false };
  }
}

export async function listWorkspaces(
  db: Db,
  partnerId: string,
  query: { externalId?: string | undefined; page: number; limit: number },
): Promise<{ workspaces: LiveWorkspace[]; total: number }> {
  const where = {
    ...live(partnerId),
    ...(query.externalId !== undefined ? { externalId: query.externalId } : {}),
  };
  const [workspaces, total] = await db.$transaction(
    [
      db.workspace.findMany({ where, orderBy: { id: 'asc' }, ...pageWindow(query.page, query.limit) }),
      db.workspace.count({ where }),
    ],
    ONE_SNAPSHOT,
  );
  return { workspaces: workspaces.map(alive), total };
}

export async function getWorkspace(db: Db, partnerId: string, workspaceId: string): Promise<LiveWorkspace> {
  return alive(
    found(await db.workspace.findFirst({ where: { ...live(partnerId), id: workspaceId } }), 'workspace'),
  );
}

/**
 * The hottest reads of this service run as named prepared statements on the pool instead of
 * Prisma: Prisma compiles each query anew, which cost most of these paths' CPU.
 * `GET_WORKSPACE` serves every GET /v1/workspaces/:id, `DESCRIBE_WORKSPACE` every settled post
 * (other services build event envelopes from it). They return the `Workspace` model's fields by
 * name (`selectList`), as Prisma would.
 */
const WORKSPACE_FIELDS: Fields<WorkspaceRow> = {
  id: true,
  partnerId: true,
  externalId: true,
  name: true,
  timezone: true,
  settings: true,
  createdAt: true,
  updatedAt: true,
  deletedAt: true,
};
const WORKSPACE_COLUMNS = selectList(WORKSPACE_FIELDS, { table: 'w' });

const GET_WORKSPACE = {
  name: 'identity_get_workspace',
  text: `SELECT ${WORKSPACE_COLUMNS}
           FROM workspaces w WHERE w.id = $1 AND w.partner_id = $2 AND w.deleted_at IS NULL`,
};

const DESCRIBE_WORKSPACE = {
  name: 'identity_describe_workspace',
  text: `SELECT ${WORKSPACE_COLUMNS}, p.slug AS "partnerSlug"
           FROM workspaces w JOIN partners p ON p.id = w.partner_id
          WHERE w.id = $1 AND w.deleted_at IS NULL`,
};

export async function readWorkspace(
  pool: pg.Pool,
  partnerId: string,
  workspaceId: string,
): Promise<LiveWorkspace> {
  const { rows } = await pool.query<WorkspaceRow>({ ...GET_WORKSPACE, values: [workspaceId, partnerId] });
  return alive(found(rows[0], 'workspace'));
}

/** A live workspace and its partner's slug, for services that build event envelopes. */
export async function describeWorkspace(
  pool: pg.Pool,
  workspaceId: string,
): Promise<{ workspace: LiveWorkspace; partnerSlug: string }> {
  const { rows } = await pool.query<WorkspaceRow & { partnerSlug: string }>({
    ...DESCRIBE_WORKSPACE,
    values: [workspaceId],
  });
  const { partnerSlug, ...workspace } = found(rows[0], 'workspace');
  return { workspace: alive(workspace), partnerSlug };
}

export async function updateWorkspace(
  db: Db,
  partnerId: string,
  workspaceId: string,
  patch: WorkspacePatch,
): Promise<LiveWorkspace> {
  if (patch.timezone !== undefined) assertTimezone(patch.timezone);
  await getWorkspace(db, partnerId, workspaceId);
  try {
    // `workspace.updated` goes out with the change, so services that cache the workspace's
    // envelope scope (partner slug, external_id) drop it.
    return await db.$transaction(async (tx) => {
      const workspace = await tx.workspace.update({
        where: { id: workspaceId },
        data: {
          name: patch.name,
          timezone: patch.timezone,
          settings: patch.settings as Prisma.InputJsonObject | undefined,
          externalId: patch.externalId,
        },
        include: { partner: true },
      });
      const { partner, ...row } = workspace;
      const scope = { partner: partner.slug, workspace: row.id, external_id: row.externalId };
      const event = makeEvent(SIGNALS.workspaceUpdated, scope, {
        workspace: { id: row.id, external_id: row.externalId },
      });
      await writeOutbox(tx, [eventRow(event)]);
      return alive(row);
    });
  } catch (error) {
    if (isUniqueViolation(error))
      throw errors.conflict('another workspace of this partner already has this external_id');
    throw error;
  }
}

/**
 * Deletes a workspace for good: its keys and embed sessions stop working at once (revocation markers go to the
 * shared cache before the commit), and `workspace.deleted` is written to the outbox in the same
 * transaction so every service purges its data. What stays is a tombstone (id, partner, deletion
 * time): the external_id (released for reuse), name, time zone, settings and the keys' labels
 * are cleared, so the delete is as irreversible as spec 4 says and keeps nothing personal.
 */
export async function deleteWorkspace(
  db: Db,
  cache: AuthCache,
  partnerId: string,
  workspaceId: string,
): Promise<void> {
  await db.$transaction(async (tx) => {
    const workspace = await tx.workspace.findFirst({
      where: { partnerId, id: workspaceId, deletedAt: null },
      include: { partner: true, apiKeys: { where: { revokedAt: null } } },
    });
    if (!workspace) throw errors.notFound('workspace');
    await cache.markRevoked(workspace.apiKeys.map((k) => k.hash));
    const now = new Date();
    await tx.apiKey.updateMany({ where: { workspaceId, revokedAt: null }, data: { revokedAt: now } });
    await tx.apiKey.updateMany({ where: { workspaceId }, data: { label: '' } });
    await endWorkspaceSessions(tx, cache, workspaceId, now);
    await tx.workspace.update({
      where: { id: workspaceId },
      data: { deletedAt: now, externalId: null, name: null, timezone: null, settings: Prisma.DbNull },
    });
    const event = makeEvent(
      SIGNALS.workspaceDeleted,
      { partner: workspace.partner.slug, workspace: workspace.id, external_id: workspace.externalId },
      { workspace: { id: workspace.id, external_id: workspace.externalId } },
      now,
    );
    await writeOutbox(tx, [eventRow(event)]);
  });
}
