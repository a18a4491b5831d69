import { EMBED_TOKEN_PREFIX, hashToken } from '@svc/crypto';
import { errors, ServiceError } from '@svc/errors';
import type { IdentityClient } from '../clients.ts';
import type { Limiter, LimitResult } from './limiter.ts';
import { fromCached, type Principal } from './principal.ts';

const BEARER = /^Bearer ([A-Za-z0-9_]{8,200})$/;

/** Who is asking, as authentication needs it: the header, and the client for failure throttling. */
export interface Credentials {
  header: string | undefined;
  /** The client's address as the trusted proxies report it (see http/client-address.ts). */
  client: string;
}

/**
 * Resolves the caller from `Authorization: Bearer <key>` and counts the request against the key's
 * budget. Hot path: one Redis script. Cache miss: identity reads Postgres and fills the cache,
 * then the script runs again. Failed lookups are throttled per client (`failuresPerMinute`):
 * guessing keys would otherwise cost a gRPC call and a database read each. Past the budget, a
 * client's credentials that are not in the cache are looked up one a second (the others answer
 * 429), so guessing stays cheap for us while a valid key (cached, or new) is never shut out.
 */
export async function authenticateRequest(
  credentials: Credentials,
  limiter: Limiter,
  identity: IdentityClient,
  failuresPerMinute: number,
): Promise<{ principal: Principal; limit: LimitResult }> {
  const { header, client } = credentials;
  const token = header ? BEARER.exec(header)?.[1] : undefined;
  if (!header)
    throw errors.unauthorized('missing Authorization header: send "Authorization: Bearer <API key>"');
  if (!token) throw errors.unauthorized('malformed Authorization header: expected "Bearer <API key>"');
  const hash = hashToken(token);
  let lookup = await limiter.authenticate(hash);
  if (lookup.kind === 'ok') return { principal: fromCached(lookup.principal), limit: lookup.limit };
  const failures = await limiter.authFailures(client, failuresPerMinute, 'peek');
  if (!failures.allowed) {
    const trickle = await limiter.authTrickle(client);
    if (!trickle.allowed) throw tooManyFailures(failures.limit, trickle);
  }
  if (lookup.kind === 'miss') {
    // Throws unauthorized for unknown or revoked keys and for ended or expired sessions.
    lookup = await identity
      .authenticate({ tokenHash: hash, embedSession: token.startsWith(EMBED_TOKEN_PREFIX) })
      .then(() => limiter.authenticate(hash))
      .catch((error: unknown) => {
        if (error instanceof ServiceError && error.code === 'unauthorized')
          return { kind: 'refused' as const };
        throw error;
      });
  }
  if (lookup.kind === 'ok') return { principal: fromCached(lookup.principal), limit: lookup.limit };
  await limiter.authFailures(client, failuresPerMinute, 'record');
  throw errors.unauthorized();
}

/** The hash a request's bearer token is known by (the request has passed authentication). */
export function bearerHash(header: string | undefined): string {
  const token = header ? BEARER.exec(header)?.[1] : undefined;
  if (!token) throw errors.unauthorized();
  return hashToken(token);
}

function tooManyFailures(perMinute: number, trickle: LimitResult): ServiceError {
  const seconds = retryAfterSeconds(trickle);
  return new ServiceError(
    'rate_limited',
    `too many failed authentications from this address (${perMinute} per minute): one credential a second is checked; retry after ${seconds} s`,
    { retryAfterSeconds: seconds },
  );
}

function rateLimitedError(limit: LimitResult, principal: Principal): ServiceError {
  const per = principal.kind === 'embed' ? 'embed session' : 'API key';
  const seconds = retryAfterSeconds(limit);
  return new ServiceError(
    'rate_limited',
    `rate limit exceeded: ${limit.limit} requests per minute per ${per}; retry after ${seconds} s`,
    { retryAfterSeconds: seconds },
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
  reply.header('X-RateLimit-Reset', String(retryAfterSeconds(limit)));
  // Retry-After comes with the error, set where every error becomes an answer (http/errors.ts).
  if (!limit.allowed) throw rateLimitedError(limit, principal);
}
