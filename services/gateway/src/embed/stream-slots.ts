import { ServiceError } from '@svc/errors';
import type { Redis } from 'ioredis';
import { runScript } from '../redis-script.ts';

/**
 * KEYS[1] = the session's open streams, KEYS[2] = the partner's (sorted sets: stream id → lease
 * end, Unix ms). ARGV = stream id, lease ms, session cap, partner cap.
 * Leases that ended (a gateway killed with its streams open) are dropped first, so a crash frees
 * its slots within one lease. → {0} opened | {1} session full | {2} partner full
 */
const OPEN_SLOT = `
local t = redis.call('TIME')
local now = tonumber(t[1]) * 1000 + math.floor(tonumber(t[2]) / 1000)
local lease = tonumber(ARGV[2])
for i = 1, 2 do redis.call('ZREMRANGEBYSCORE', KEYS[i], '-inf', now) end
if redis.call('ZCARD', KEYS[1]) >= tonumber(ARGV[3]) then return { 1 } end
if redis.call('ZCARD', KEYS[2]) >= tonumber(ARGV[4]) then return { 2 } end
for i = 1, 2 do
  redis.call('ZADD', KEYS[i], now + lease, ARGV[1])
  redis.call('PEXPIRE', KEYS[i], lease)
end
return { 0 }
`;

/** Extends a stream's lease in both sets (while its gateway holds it open). */
const RENEW_SLOT = `
local t = redis.call('TIME')
local now = tonumber(t[1]) * 1000 + math.floor(tonumber(t[2]) / 1000)
local lease = tonumber(ARGV[2])
for i = 1, 2 do
  redis.call('ZADD', KEYS[i], 'XX', now + lease, ARGV[1])
  redis.call('PEXPIRE', KEYS[i], lease)
end
return 0
`;

export interface StreamLimits {
  perSession: number;
  perPartner: number;
  /** How long a slot outlives its last renewal: a stream renews it with each heartbeat. */
  leaseMs: number;
}

/** One open stream's claim on its session's and its partner's share. */
export interface StreamSlot {
  renew(): Promise<void>;
  release(): Promise<void>;
}

/**
 * The widget's event streams counted across every gateway replica: at most `perSession` open
 * streams per embed session and `perPartner` per partner, so one tenant (or one leaked session
 * token) cannot hold the connections and fan-out work of everyone. Counted in Redis with leases,
 * so a replica that dies with streams open gives their slots back without anyone cleaning up.
 */
export class StreamSlots {
  constructor(
    private readonly redis: Redis,
    private readonly prefix: string,
    private readonly limits: StreamLimits,
  ) {
    redis.defineCommand('openStreamSlot', { numberOfKeys: 2, lua: OPEN_SLOT });
    redis.defineCommand('renewStreamSlot', { numberOfKeys: 2, lua: RENEW_SLOT });
  }

  /** Claims a slot, or refuses with 429 naming the cap that is full. */
  async open(streamId: string, sessionId: string, partnerId: string): Promise<StreamSlot> {
    const keys = [`${this.prefix}sse:session:${sessionId}`, `${this.prefix}sse:partner:${partnerId}`];
    const { perSession, perPartner, leaseMs } = this.limits;
    const [outcome] = (await this.run('openStreamSlot', [
      ...keys,
      streamId,
      leaseMs,
      perSession,
      perPartner,
    ])) as [number];
    if (outcome === 1) throw full(`${perSession} open event streams per embed session`, leaseMs);
    if (outcome === 2) throw full(`${perPartner} open event streams per partner`, leaseMs);
    return {
      renew: async () => {
        await this.run('renewStreamSlot', [...keys, streamId, leaseMs]);
      },
      release: async () => {
        await Promise.all(keys.map((key) => this.redis.zrem(key, streamId))).catch(() => {});
      },
    };
  }

  private run(command: string, args: (string | number)[]): Promise<unknown> {
    return runScript(this.redis, command, args, 'event streams are unavailable (Redis is not answering)');
  }
}

function full(cap: string, leaseMs: number): ServiceError {
  const seconds = Math.ceil(leaseMs / 1000);
  return new ServiceError(
    'rate_limited',
    `too many event streams: at most ${cap}; close one (or retry after ${seconds} s)`,
    { retryAfterSeconds: seconds },
  );
}
