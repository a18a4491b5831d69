import { REVOKED, UNKNOWN } from '@svc/auth-cache';
import { ServiceError } from '@svc/errors';
import type { Logger } from '@svc/logging';
import type { Limiter } from '../auth/limiter.ts';
import type { IdentityClient } from '../clients.ts';

/**
 * Whether an open stream's embed session still holds: asked on a short interval by every stream,
 * so a session ended or a workspace deleted while the end signal (at most once, over NATS) was
 * missed still closes its streams within one interval. The shared credential cache answers
 * (identity writes `revoked` there before it commits an end); without an entry, identity does.
 * Only a definite "no" ends a stream: an identity or Redis outage keeps it open.
 */
export function sessionCheck(
  limiter: Limiter,
  identity: IdentityClient,
  logger: Logger,
): (tokenHash: string) => Promise<boolean> {
  return async (tokenHash) => {
    try {
      const cached = await limiter.cache.read(tokenHash);
      if (cached === REVOKED || cached === UNKNOWN) return false;
      if (cached) return Date.now() < expiresAtMs(cached);
      await identity.authenticate({ tokenHash, embedSession: true });
      return true;
    } catch (error) {
      if (error instanceof ServiceError && error.code === 'unauthorized') return false;
      logger.warn({ err: error }, 'embed stream: its session could not be checked; kept open');
      return true;
    }
  };
}

/** The session's expiry as its cache entry holds it (never, for a key that is not a session). */
function expiresAtMs(cached: string): number {
  const principal = JSON.parse(cached) as { embed?: { expires_at_ms?: number } };
  return principal.embed?.expires_at_ms ?? Number.POSITIVE_INFINITY;
}
