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
    private readonly redis: Redis,
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

  async limitByIp(ip: string, limit: number): Promise<LimitResult> {
    const [allowed, remaining, waitMs] = (await this.run('limitOnly', [
      `${this.prefix}rl:ip:${ip}`,
      limit,
      this.windowMs,
    ])) as [number, number, number];
    return { allowed: allowed === 1, remaining, waitMs, limit };
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
