import { AuthCache } from '@svc/auth-cache';
import { IdentityService } from '@svc/contracts';
import type { Logger } from '@svc/logging';
import { ServiceRuntime } from '@svc/ops';
import { Redis } from 'ioredis';
import { flushLastUsed } from './api-keys.ts';
import type { IdentityConfig } from './config.ts';
import { openDatabase, SCHEMA } from './db.ts';
import { purgeEmbedSessions } from './embed-sessions.ts';
import { identityHandlers } from './grpc-handlers.ts';
import { purgeRequestLogs } from './request-logs.ts';

const HOUR_MS = 3_600_000;

/** Starts the identity service: gRPC server, outbox relay and its periodic jobs. */
export function startIdentity(config: IdentityConfig, logger: Logger) {
  return ServiceRuntime.launch('identity', logger, config, async (runtime) => {
    const { pool, prisma } = openDatabase(config.DATABASE_URL, logger);
    runtime.useDatabase(pool, prisma);
    const redis = new Redis(config.REDIS_URL, { maxRetriesPerRequest: 1, commandTimeout: 2_000 });
    redis.on('error', (err) => logger.warn({ err: err.message }, 'Redis connection problem'));
    runtime.readyWhen('redis', () => redis.ping()).closeAtEnd('redis', () => redis.disconnect());
    const cache = new AuthCache(redis, config.REDIS_PREFIX);
    const bus = await runtime.connectBus(config);
    const relay = runtime.outbox(pool, bus, SCHEMA);

    const options = { allowLoopbackOrigins: config.APP_ENV === 'development' };
    const handlers = identityHandlers(prisma, pool, cache, relay, options);
    const port = await runtime.serveGrpc(config.IDENTITY_GRPC_ADDRESS, IdentityService, handlers);

    // The last flush at stop keeps the uses noted since the previous tick.
    runtime.every('flush last_used_at', config.LAST_USED_FLUSH_MS, () => flushLastUsed(prisma, cache), {
      runAtStop: true,
    });
    runtime.every('purge request logs', HOUR_MS, () =>
      purgeRequestLogs(prisma, config.REQUEST_LOG_RETENTION_DAYS),
    );
    runtime.every('purge embed sessions', HOUR_MS, () => purgeEmbedSessions(prisma));
    const opsPort = await runtime.startOps({ port: config.OPS_PORT, host: config.OPS_HOST });
    return { port, prisma, pool, opsPort };
  });
}
