import type { AuthCache } from '@svc/auth-cache';
import { isUniqueViolation } from '@svc/db';
import { errors, ServiceError } from '@svc/errors';
import { newId } from '@svc/ids';
import { createApiKey, revokeApiKey } from '../api-keys.ts';
import type { Db } from '../db.ts';
import type { Partner } from '../generated/prisma/client.ts';

const SLUG = /^[a-z0-9][a-z0-9-]{1,62}$/;

export function partnerView(p: Partner) {
  return {
    id: p.id,
    slug: p.slug,
    name: p.name,
    rate_limit_per_minute: p.rateLimitPerMinute,
    embed_rate_limit_per_minute: p.embedRateLimitPerMinute,
    created: p.createdAt.toISOString(),
  };
}

async function partnerBySlug(db: Db, slug: string): Promise<Partner> {
  const partner = await db.partner.findUnique({ where: { slug } });
  if (!partner) throw errors.notFound(`partner "${slug}"`);
  return partner;
}

/** Creates a partner and its first partner key (shown once). */
export async function createPartner(db: Db, slug: string, name?: string) {
  if (!SLUG.test(slug)) throw errors.validation('slug', 'slug must be 2-63 characters of a-z, 0-9 and "-"');
  try {
    const partner = await db.partner.create({ data: { id: newId('partner'), slug, name: name ?? slug } });
    const { plainKey, key } = await createApiKey(db, partner.id, null, 'partner key');
    return { partner: partnerView(partner), key: plainKey, key_id: key.id };
  } catch (error) {
    if (isUniqueViolation(error)) throw errors.conflict(`a partner with slug "${slug}" already exists`);
    throw error;
  }
}

/** A new partner key, for rotation: issue, switch, then revoke the old one. */
export async function issuePartnerKey(db: Db, slug: string) {
  const partner = await partnerBySlug(db, slug);
  const { plainKey, key } = await createApiKey(db, partner.id, null, 'partner key');
  return { partner: partnerView(partner), key: plainKey, key_id: key.id };
}

/** Changes the per-key limit; cached principals are dropped so every gateway picks it up now. */
export async function setPartnerLimit(db: Db, cache: AuthCache, slug: string, perMinute: number) {
  if (!Number.isInteger(perMinute) || perMinute < 1 || perMinute > 1_000_000) {
    throw errors.validation('per-minute', '--per-minute must be a whole number from 1 to 1000000');
  }
  const partner = await db.partner.update({
    where: { id: (await partnerBySlug(db, slug)).id },
    data: { rateLimitPerMinute: perMinute },
  });
  const keys = await db.apiKey.findMany({
    where: { partnerId: partner.id, revokedAt: null },
    select: { hash: true },
  });
  await cache.forget(keys.map((k) => k.hash));
  return { partner: partnerView(partner) };
}

/** Changes the per-session limit of embed sessions; cached sessions are dropped so it applies now. */
export async function setPartnerEmbedLimit(db: Db, cache: AuthCache, slug: string, perMinute: number) {
  if (!Number.isInteger(perMinute) || perMinute < 1 || perMinute > 1_000_000) {
    throw errors.validation('per-minute', '--per-minute must be a whole number from 1 to 1000000');
  }
  const partner = await db.partner.update({
    where: { id: (await partnerBySlug(db, slug)).id },
    data: { embedRateLimitPerMinute: perMinute },
  });
  const sessions = await db.embedSession.findMany({
    where: { partnerId: partner.id, endedAt: null, expiresAt: { gt: new Date() } },
    select: { hash: true },
  });
  await cache.forget(sessions.map((s) => s.hash));
  return { partner: partnerView(partner) };
}

export async function revokeKeyById(db: Db, cache: AuthCache, id: string) {
  if (!id.startsWith('key_')) throw new ServiceError('validation_error', 'not a key id', { field: 'id' });
  await revokeApiKey(db, cache, { id });
  return { revoked: id };
}
