import type { AuthCache, CachedPrincipal } from '@svc/auth-cache';
import { eventRow, makeEvent, SIGNALS, writeOutbox } from '@svc/bus';
import { embedSurface } from '@svc/contracts/public';
import { generateEmbedToken, hashToken } from '@svc/crypto';
import { ONE_SNAPSHOT, pageWindow } from '@svc/db';
import { errors } from '@svc/errors';
import { newId } from '@svc/ids';
import type { Db } from './db.ts';
import { parseAllowedOrigins } from './embed-origins.ts';
import type { EmbedSession } from './generated/prisma/client.ts';

/** What a widget may do; a session grants some of them (every one by default). */
const SURFACES = embedSurface.options;
const DEFAULT_EXPIRES_IN_S = 3600;
const MIN_EXPIRES_IN_S = 60;
const MAX_EXPIRES_IN_S = 86_400;
/** Ended and expired sessions are kept this long (for the partner's list), then purged. */
const RETENTION_MS = 24 * 3_600_000;

export interface EmbedSessionInput {
  surfaces: string[];
  allowedOrigins: string[];
  /** 0: the default. */
  expiresInSeconds: number;
}

function checkSurfaces(surfaces: string[]): string[] {
  if (surfaces.length === 0) return [...SURFACES];
  surfaces.forEach((surface, index) => {
    if (!(SURFACES as readonly string[]).includes(surface))
      throw errors.validation(`surfaces.${index}`, `surface must be one of ${SURFACES.join(', ')}`);
  });
  return SURFACES.filter((surface) => surfaces.includes(surface));
}

function checkExpiresIn(seconds: number): number {
  if (seconds === 0) return DEFAULT_EXPIRES_IN_S;
  if (!Number.isInteger(seconds) || seconds < MIN_EXPIRES_IN_S || seconds > MAX_EXPIRES_IN_S)
    throw errors.validation(
      'expires_in',
      `expires_in must be a whole number of seconds from ${MIN_EXPIRES_IN_S} to ${MAX_EXPIRES_IN_S}`,
    );
  return seconds;
}

/** The checked input of a new session (the caller checks the workspace, see grpc-handlers.ts). */
export function checkEmbedSessionInput(
  input: EmbedSessionInput,
  allowLoopbackHttp: boolean,
): EmbedSessionInput {
  return {
    surfaces: checkSurfaces(input.surfaces),
    allowedOrigins: parseAllowedOrigins(input.allowedOrigins, allowLoopbackHttp),
    expiresInSeconds: checkExpiresIn(input.expiresInSeconds),
  };
}

/** Mints a session with checked input; the plain token is answered once. */
export async function createEmbedSession(
  db: Db,
  partnerId: string,
  workspaceId: string,
  input: EmbedSessionInput,
): Promise<{ session: EmbedSession; plainToken: string }> {
  const plainToken = generateEmbedToken();
  const now = Date.now();
  const session = await db.embedSession.create({
    data: {
      id: newId('embedSession', now),
      partnerId,
      workspaceId,
      hash: hashToken(plainToken),
      surfaces: input.surfaces,
      allowedOrigins: input.allowedOrigins,
      expiresAt: new Date(now + input.expiresInSeconds * 1000),
      createdAt: new Date(now),
    },
  });
  return { session, plainToken };
}

/** The partner's live sessions (neither ended nor expired), oldest first. */
export async function listEmbedSessions(
  db: Db,
  partnerId: string,
  query: { workspaceId: string; page: number; limit: number },
): Promise<{ sessions: EmbedSession[]; total: number }> {
  const where = {
    partnerId,
    ...(query.workspaceId ? { workspaceId: query.workspaceId } : {}),
    endedAt: null,
    expiresAt: { gt: new Date() },
  };
  const [sessions, total] = await db.$transaction(
    [
      db.embedSession.findMany({ where, orderBy: { id: 'asc' }, ...pageWindow(query.page, query.limit) }),
      db.embedSession.count({ where }),
    ],
    ONE_SNAPSHOT,
  );
  return { sessions, total };
}

/**
 * Ends a session at once: the revocation marker goes to the shared cache before the commit (as for
 * keys), so no gateway accepts the token again, and `embed.session.ended` goes out with the commit
 * so gateways close the session's open streams.
 */
export async function endEmbedSession(
  db: Db,
  cache: AuthCache,
  partnerId: string,
  sessionId: string,
): Promise<void> {
  await db.$transaction(async (tx) => {
    const session = await tx.embedSession.findFirst({
      where: { id: sessionId, partnerId, endedAt: null },
      include: { partner: true, workspace: true },
    });
    if (!session) throw errors.notFound('embed session');
    await cache.markRevoked([session.hash]);
    const now = new Date();
    await tx.embedSession.update({ where: { id: session.id }, data: { endedAt: now } });
    const scope = {
      partner: session.partner.slug,
      workspace: session.workspaceId,
      external_id: session.workspace.externalId,
    };
    const signal = makeEvent(SIGNALS.embedSessionEnded, scope, { session: { id: session.id } }, now);
    await writeOutbox(tx, [eventRow(signal)]);
  });
}

/** The cache-miss path of an `sve_` token: reads Postgres and fills the shared cache. */
export async function authenticateEmbed(
  db: Db,
  cache: AuthCache,
  tokenHash: string,
): Promise<CachedPrincipal> {
  const session = await db.embedSession.findUnique({
    where: { hash: tokenHash },
    include: { partner: true, workspace: true },
  });
  const usable =
    session && !session.endedAt && session.expiresAt.getTime() > Date.now() && !session.workspace.deletedAt;
  const principal: CachedPrincipal | null = usable
    ? {
        key_id: session.id,
        partner_id: session.partnerId,
        partner_slug: session.partner.slug,
        workspace_id: session.workspaceId,
        rate_limit_per_minute: session.partner.embedRateLimitPerMinute,
        embed: { surfaces: session.surfaces, expires_at_ms: session.expiresAt.getTime() },
      }
    : null;
  // Ended sessions are already marked; expired and unknown ones get the negative entry.
  if (!session?.endedAt) await cache.fill(tokenHash, principal);
  if (!principal) throw errors.unauthorized();
  return principal;
}

/** A session by id, for the widget's page (which origins may frame it), with whether it is live. */
export async function describeEmbedSession(
  db: Db,
  sessionId: string,
): Promise<{ session: EmbedSession; live: boolean }> {
  const session = await db.embedSession.findUnique({
    where: { id: sessionId },
    include: { workspace: true },
  });
  if (!session) throw errors.notFound('embed session');
  const live = !session.endedAt && session.expiresAt.getTime() > Date.now() && !session.workspace.deletedAt;
  const { workspace: _workspace, ...row } = session;
  return { session: row, live };
}

/** Ends the live sessions of a workspace being deleted, marked revoked in the cache before the caller commits. */
export async function endWorkspaceSessions(
  tx: Pick<Db, 'embedSession'>,
  cache: AuthCache,
  workspaceId: string,
  now: Date,
): Promise<void> {
  const live = await tx.embedSession.findMany({
    where: { workspaceId, endedAt: null },
    select: { hash: true },
  });
  await cache.markRevoked(live.map((s) => s.hash));
  await tx.embedSession.updateMany({ where: { workspaceId, endedAt: null }, data: { endedAt: now } });
}

/** Drops sessions that ended or expired more than a day ago. */
export async function purgeEmbedSessions(db: Db, now = Date.now()): Promise<number> {
  const before = new Date(now - RETENTION_MS);
  const { count } = await db.embedSession.deleteMany({
    where: { OR: [{ expiresAt: { lt: before } }, { endedAt: { lt: before } }] },
  });
  return count;
}
