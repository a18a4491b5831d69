import type { AuthCache, CachedPrincipal } from '@svc/auth-cache';
import { generateApiKey, hashToken, keyDisplayPrefix } from '@svc/crypto';
import { ONE_SNAPSHOT, pageWindow } from '@svc/db';
import { errors } from '@svc/errors';
import { newId } from '@svc/ids';
import type { Db } from './db.ts';
import type { ApiKey } from './generated/prisma/client.ts';

export async function createApiKey(
  db: Db,
  partnerId: string,
  workspaceId: string | null,
  label: string,
): Promise<{ key: ApiKey; plainKey: string }> {
  const plainKey = generateApiKey();
  const key = await db.apiKey.create({
    data: {
      id: newId('apiKey'),
      partnerId,
      workspaceId,
      label,
      prefix: keyDisplayPrefix(plainKey),
      hash: hashToken(plainKey),
    },
  });
  return { key, plainKey };
}

export async function listApiKeys(
  db: Db,
  partnerId: string,
  workspaceId: string,
  query: { page: number; limit: number },
): Promise<{ keys: ApiKey[]; total: number }> {
  const where = { partnerId, workspaceId, revokedAt: null };
  const [keys, total] = await db.$transaction(
    [
      db.apiKey.findMany({ where, orderBy: { id: 'asc' }, ...pageWindow(query.page, query.limit) }),
      db.apiKey.count({ where }),
    ],
    ONE_SNAPSHOT,
  );
  return { keys, total };
}

/** Revokes a key; the cache marker is written before the commit so no replica accepts it again. */
export async function revokeApiKey(
  db: Db,
  cache: AuthCache,
  where: { id: string; partnerId?: string; workspaceId?: string },
) {
  await db.$transaction(async (tx) => {
    const key = await tx.apiKey.findFirst({ where: { ...where, revokedAt: null } });
    if (!key) throw errors.notFound('API key');
    await cache.markRevoked([key.hash]);
    await tx.apiKey.update({ where: { id: key.id }, data: { revokedAt: new Date() } });
  });
}

/** The cache-miss path of authentication: reads Postgres and fills the shared cache. */
export async function authenticate(db: Db, cache: AuthCache, tokenHash: string): Promise<CachedPrincipal> {
  const key = await db.apiKey.findUnique({
    where: { hash: tokenHash },
    include: { partner: true, workspace: true },
  });
  const usable = key && !key.revokedAt && !key.workspace?.deletedAt;
  const principal: CachedPrincipal | null = usable
    ? {
        key_id: key.id,
        partner_id: key.partnerId,
        partner_slug: key.partner.slug,
        workspace_id: key.workspaceId,
        rate_limit_per_minute: key.partner.rateLimitPerMinute,
      }
    : null;
  // A revoked key is already marked; only unknown hashes get the negative entry.
  if (!key || usable) await cache.fill(tokenHash, principal);
  if (!principal) throw errors.unauthorized();
  return principal;
}

/** Writes the last-used times the gateways collected in Redis; one UPDATE per flush. */
export async function flushLastUsed(db: Db, cache: AuthCache): Promise<number> {
  const pending = await cache.takeLastUsed();
  if (pending.size === 0) return 0;
  const ids = [...pending.keys()];
  const times = ids.map((id) => (pending.get(id) as Date).toISOString());
  await db.$executeRaw`
    UPDATE api_keys AS k SET last_used_at = GREATEST(COALESCE(k.last_used_at, u.at), u.at)
      FROM unnest(${ids}::text[], ${times}::timestamptz[]) AS u(id, at)
     WHERE k.id = u.id`;
  return pending.size;
}
