import type { CachedPrincipal } from '@svc/auth-cache';
import { AuthCache } from '@svc/auth-cache';
import type { Redis } from 'ioredis';
import { runScript } from '../redis-script.ts';
import { AUTHENTICATE_AND_LIMIT, LIMIT_ONLY } from './scripts.ts';

export interface LimitResult {
  allowed: boolean;
  limit: number;
  remaining: number;
  /** Milliseconds until one more request would be allowed (or until the current window rolls). */
  waitMs: number;
}

export type AuthLookup =
  | { kind: 'miss' }
  | { kind: 'refused' }
  | { kind: 'ok'; principal: CachedPrincipal; limit: LimitResult };

/** The gateway's view of Redis: the credential cache and the rate limits, fail closed. */
export class Limiter {
  readonly cache: AuthCache;

  constructor(
    readonly redis: Redis,
    private readonly prefix: string,
    private readonly windowMs: number,
  ) {
    this.cache = new AuthCache(redis, prefix);
    redis.defineCommand('authenticateAndLimit', { numberOfKeys: 2, lua: AUTHENTICATE_AND_LIMIT });
    redis.defineCommand('limitOnly', { numberOfKeys: 1, lua: LIMIT_ONLY });
  }

  async authenticate(tokenHash: string): Promise<AuthLookup> {
    const reply = (await this.run('authenticateAndLimit', [
      this.cache.authKey(tokenHash),
      this.cache.lastUsedKey,
      this.prefix,
      this.windowMs,
    ])) as [number, string?, number?, number?, number?, number?];
    if (reply[0] === 0) return { kind: 'miss' };
    if (reply[0] === 1) return { kind: 'refused' };
    const [, json, allowed, remaining, waitMs, limit] = reply;
    return {
      kind: 'ok',
      principal: JSON.parse(json as string) as CachedPrincipal,
      limit: { allowed: allowed === 1, remaining: remaining ?? 0, waitMs: waitMs ?? 0, limit: limit ?? 0 },
    };
  }

  /** Counts one request of a client (an IP, or its /64) against a per-minute limit. */
  limitByIp(client: string, limit: number): Promise<LimitResult> {
    return this.window(`rl:ip:${client}`, limit, 1, 'always');
  }

  /**
   * Failed authentications of a client: `peek` asks whether one more would fit (before a lookup
   * that may fail), `record` counts one that did. Only unknown, revoked or expired credentials
   * count, so a valid key is never refused here while it is in the cache.
   */
  authFailures(client: string, limit: number, mode: 'peek' | 'record'): Promise<LimitResult> {
    return this.window(`rl:authfail:${client}`, limit, 1, mode === 'record' ? 'always' : 'never');
  }

  /**
   * One lookup a second for a client past its failure budget: what a guesser gets is bounded, and
   * a valid key not in the cache yet (new, or its entry expired) still passes within a second.
   * Only lookups made count here, so a burst of refused guesses cannot push the next one away.
   */
  authTrickle(client: string): Promise<LimitResult> {
    return this.window(`rl:authtrickle:${client}`, 1, 1, 'if_allowed', 1000);
  }

  /**
   * Takes `count` more units from a key's own window (the calls of an MCP batch after its first,
   * which the request's authentication counted); `fitting` says how many of them fit.
   */
  takeFromKey(keyId: string, limit: number, count: number): Promise<LimitResult & { fitting: number }> {
    return this.window(`rl:key:${keyId}`, limit, count, 'always');
  }

  private async window(
    key: string,
    limit: number,
    cost: number,
    record: 'always' | 'if_allowed' | 'never',
    windowMs = this.windowMs,
  ): Promise<LimitResult & { fitting: number }> {
    const [allowed, remaining, waitMs, fitting] = (await this.run('limitOnly', [
      `${this.prefix}${key}`,
      limit,
      windowMs,
      cost,
      record,
    ])) as [number, number, number, number];
    return { allowed: allowed === 1, remaining, waitMs, limit, fitting };
  }

  private run(command: string, args: (string | number)[]): Promise<unknown> {
    return runScript(
      this.redis,
      command,
      args,
      'rate limiting is unavailable (Redis is not answering); try again shortly',
    );
  }
}
