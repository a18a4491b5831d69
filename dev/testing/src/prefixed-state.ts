import { connectBus, STREAMS, type StreamKey } from '@svc/bus';
import { createLogger } from '@svc/logging';
import { Redis } from 'ioredis';

/**
 * Removes what a system left under its prefix on the shared servers: its JetStream streams and
 * its Redis keys, so runs on a shared machine do not pile up state.
 */
export async function removePrefixedState(
  prefix: string,
  env: NodeJS.ProcessEnv = process.env,
): Promise<void> {
  const logger = createLogger('cleanup', { level: 'warn', destination: process.stderr });
  const bus = await connectBus({
    url: env.NATS_URL ?? 'nats://127.0.0.1:4222',
    prefix,
    name: 'cleanup',
    logger,
  });
  try {
    for (const key of Object.keys(STREAMS) as StreamKey[])
      await bus.jsm.streams.delete(bus.subjects.streamName(key)).catch(() => {});
  } finally {
    await bus.close();
  }
  const redis = new Redis(env.REDIS_URL ?? 'redis://127.0.0.1:6379', { maxRetriesPerRequest: 1 });
  try {
    let cursor = '0';
    do {
      const [next, keys] = await redis.scan(cursor, 'MATCH', `${prefix}:*`, 'COUNT', 1000);
      cursor = next;
      if (keys.length > 0) await redis.del(...keys);
    } while (cursor !== '0');
  } finally {
    redis.disconnect();
  }
}
