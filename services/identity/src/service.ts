import { AuthCache } from '@svc/auth-cache';
import { connectBus, OutboxRelay } from '@svc/bus';
import { addService, grpc, IdentityService, startGrpcServer } from '@svc/contracts';
import type { Logger } from '@svc/logging';
import { every, startOpsServer } from '@svc/ops';
import { Redis } from 'ioredis';
import { flushLastUsed } from './api-keys.ts';
import type { IdentityConfig } from './config.ts';
import { openDatabase, SCHEMA } from './db.ts';
import { identityHandlers } from './grpc-handlers.ts';
import { purgeRequestLogs } from './request-logs.ts';

/** Starts the identity service: gRPC server, outbox relay and its periodic jobs. */
export async function startIdentity(config: IdentityConfig, logger: Logger) {
  const { pool, prisma } = openDatabase(config.DATABASE_URL);
  const redis = new Redis(config.REDIS_URL, { maxRetriesPerRequest: 1, commandTimeout: 2_000 });
  redis.on('error', (err) => logger.warn({ err: err.message }, 'Redis connection problem'));
  const cache = new AuthCache(redis, config.REDIS_PREFIX);
  const bus = await connectBus({
    url: config.NATS_URL,
    prefix: config.NATS_PREFIX,
    name: 'identity',
    logger,
  });
  const relay = new OutboxRelay(pool, bus, logger, { schema: SCHEMA });
  relay.start();

  const server = new grpc.Server();
  addService(server, IdentityService, identityHandlers(prisma, pool, cache, relay), logger);
  const port = await startGrpcServer(server, config.IDENTITY_GRPC_ADDRESS);

  const jobs = [
    every(config.LAST_USED_FLUSH_MS, () => flushLastUsed(prisma, cache), 'flush last_used_at', logger),
    every(
      3_600_000,
      () => purgeRequestLogs(prisma, config.REQUEST_LOG_RETENTION_DAYS),
      'purge request logs',
      logger,
    ),
    every(3_600_000, () => relay.purgePublished(), 'purge published outbox rows', logger),
  ];
  logger.info({ port }, 'identity gRPC server listening');
  const ops = await startOpsServer({
    service: 'identity',
    port: config.OPS_PORT,
    logger,
    checks: {
      database: () => pool.query('SELECT 1'),
      nats: () => bus.nc.flush(),
      redis: () => redis.ping(),
    },
  });

  return {
    port,
    prisma,
    pool,
    opsPort: ops.port,
    async stop() {
      for (const job of jobs) clearInterval(job);
      await ops.close();
      await new Promise<void>((resolve) => server.tryShutdown(() => resolve()));
      await relay.stop();
      await flushLastUsed(prisma, cache).catch(() => {});
      await bus.close();
      redis.disconnect();
      await prisma.$disconnect();
      await pool.end();
    },
  };
}
