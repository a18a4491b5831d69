import { EMBED_TOKEN_PREFIX, hashToken } from '@svc/crypto';
import { errors, ServiceError } from '@svc/errors';
import type { IdentityClient } from '../clients.ts';
import type { Limiter, LimitResult } from './limiter.ts';
import { fromCached, type Principal } from './principal.ts';

const BEARER = /^Bearer ([A-Za-z0-9_]{8,200})$/;

/**
 * Resolves the caller from `Authorization: Bearer <key>` and counts the request against the key's
 * budget. Hot path: one Redis script. Cache miss: identity reads Postgres and fills the cache,
 * then the script runs again.
 */
export async function authenticateRequest(
  header: string | undefined,
  limiter: Limiter,
  identity: IdentityClient,
): Promise<{ principal: Principal; limit: LimitResult }> {
  const token = header ? BEARER.exec(header)?.[1] : undefined;
  if (!header)
    throw errors.unauthorized('missing Authorization header: send "Authorization: Bearer <API key>"');
  if (!token) throw errors.unauthorized('malformed Authorization header: expected "Bearer <API key>"');
  const hash = hashToken(token);
  let lookup = await limiter.authenticate(hash);
  if (lookup.kind === 'miss') {
    // Throws unauthorized for unknown or revoked keys and for ended or expired sessions.
    await identity.authenticate({ tokenHash: hash, embedSession: token.startsWith(EMBED_TOKEN_PREFIX) });
    lookup = await limiter.authenticate(hash);
  }
  if (lookup.kind !== 'ok') throw errors.unauthorized();
  return { principal: fromCached(lookup.principal), limit: lookup.limit };
}

function rateLimitedError(limit: LimitResult, principal: Principal): ServiceError {
  const per = principal.kind === 'embed' ? 'embed session' : 'API key';
  return new ServiceError(
    'rate_limited',
    `rate limit exceeded: ${limit.limit} requests per minute per ${per}; retry after ${retryAfterSeconds(limit)} s`,
  );
}

export function retryAfterSeconds(limit: LimitResult): number {
  return Math.max(1, Math.ceil(limit.waitMs / 1000));
}

/** Sets the X-RateLimit-* headers of an authenticated answer; over the budget, 429 with Retry-After. */
export function applyLimit(
  reply: { header(name: string, value: string): unknown },
  limit: LimitResult,
  principal: Principal,
): void {
  reply.header('X-RateLimit-Limit', String(limit.limit));
  reply.header('X-RateLimit-Remaining', String(limit.remaining));
  reply.header('X-RateLimit-Reset', String(Math.max(1, Math.ceil(limit.waitMs / 1000))));
  if (limit.allowed) return;
  reply.header('Retry-After', String(retryAfterSeconds(limit)));
  throw rateLimitedError(limit, principal);
}
