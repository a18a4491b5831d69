import type { Redis } from 'ioredis';

/**
 * The credential cache shared by identity (writer) and the gateway (reader, inside its rate-limit
 * script), so authentication costs no database or gRPC round trip per request.
 *
 * `auth:<sha256>` holds the principal as JSON, or a marker:
 *  - `revoked`: written by identity *before* it commits a revocation; it overwrites a cached
 *    principal and, living longer than any principal entry, blocks a racing cache fill (fills use
 *    SET NX). Every gateway replica reads the same key, so revocation is immediate everywhere.
 *  - `unknown`: a hash no key has (negative cache), so a bad token repeated does not reach the
 *    database each time. Kept briefly (UNKNOWN_TTL_S): it only spares repeats, and a key issued
 *    later under the same hash must not stay refused for long.
 * `last_used` is a hash key_id → ms, written by the gateway and flushed to Postgres by identity.
 */
export interface CachedPrincipal {
  /** The API key's id, or the embed session's id. */
  key_id: string;
  partner_id: string;
  partner_slug: string;
  workspace_id: string | null;
  rate_limit_per_minute: number;
  /**
   * Embed sessions only: the surfaces granted, and the expiry (Unix ms) the gateway's script checks
   * against Redis's clock, so an expired session is refused on every replica at the same instant.
   */
  embed?: { surfaces: string[]; expires_at_ms: number };
}

export const REVOKED = 'revoked';
export const UNKNOWN = 'unknown';
export const PRINCIPAL_TTL_S = 300;
export const TOMBSTONE_TTL_S = 900;
export const UNKNOWN_TTL_S = 30;

export class AuthCache {
  constructor(
    private readonly redis: Redis,
    readonly prefix: string,
  ) {}

  authKey(tokenHash: string): string {
    return `${this.prefix}auth:${tokenHash}`;
  }

  get lastUsedKey(): string {
    return `${this.prefix}last_used`;
  }

  /** The entry of a token hash as stored: a principal's JSON, a marker, or null when absent. */
  read(tokenHash: string): Promise<string | null> {
    return this.redis.get(this.authKey(tokenHash));
  }

  /** Fills the cache unless an entry (notably a revocation marker) is already there. */
  async fill(tokenHash: string, principal: CachedPrincipal | null): Promise<void> {
    const value = principal ? JSON.stringify(principal) : UNKNOWN;
    const ttl = principal ? PRINCIPAL_TTL_S : UNKNOWN_TTL_S;
    await this.redis.set(this.authKey(tokenHash), value, 'EX', ttl, 'NX');
  }

  async markRevoked(tokenHashes: string[]): Promise<void> {
    if (tokenHashes.length === 0) return;
    const pipeline = this.redis.multi();
    for (const hash of tokenHashes) pipeline.set(this.authKey(hash), REVOKED, 'EX', TOMBSTONE_TTL_S);
    await pipeline.exec();
  }

  /** Drops entries so the next request re-reads identity (for example after a limit change). */
  async forget(tokenHashes: string[]): Promise<void> {
    if (tokenHashes.length > 0) await this.redis.del(...tokenHashes.map((h) => this.authKey(h)));
  }

  /** Atomically takes the pending last-used timestamps (any replica may call it). */
  async takeLastUsed(): Promise<Map<string, Date>> {
    const claimed = `${this.lastUsedKey}:flushing:${process.pid}:${Date.now()}`;
    try {
      await this.redis.rename(this.lastUsedKey, claimed);
    } catch {
      return new Map(); // nothing pending
    }
    const entries = await this.redis.hgetall(claimed);
    await this.redis.del(claimed);
    return new Map(Object.entries(entries).map(([keyId, ms]) => [keyId, new Date(Number(ms))]));
  }
}
