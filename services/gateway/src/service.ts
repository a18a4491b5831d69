import type { Logger } from '@svc/logging';
import { Redis } from 'ioredis';
import { buildGateway } from './app.ts';
import { Limiter } from './auth/limiter.ts';
import { connectClients } from './clients.ts';
import type { GatewayConfig } from './config.ts';
import { RequestLogBuffer } from './http/request-log.ts';

/** Starts the gateway: Redis (fail closed, never queue commands while disconnected), gRPC clients, HTTP. */
export async function startGateway(config: GatewayConfig, logger: Logger) {
  const redis = new Redis(config.REDIS_URL, {
    enableOfflineQueue: false,
    maxRetriesPerRequest: 0,
    commandTimeout: 1_000,
    retryStrategy: (attempt) => Math.min(attempt * 100, 2_000),
  });
  redis.on('error', (err) => logger.warn({ err: err.message }, 'Redis connection problem'));
  await new Promise<void>((resolve) =>
    redis.status === 'ready' ? resolve() : redis.once('ready', () => resolve()),
  );
  const clients = connectClients({ identity: config.IDENTITY_GRPC_URL });
  const requestLog = new RequestLogBuffer(clients.identity, logger);
  const limiter = new Limiter(redis, config.REDIS_PREFIX, config.RATE_LIMIT_WINDOW_MS);
  const app = buildGateway({ config, logger, limiter, clients, requestLog });
  app.get('/readyz', async (_request, reply) => {
    const redisReady = redis.status === 'ready';
    return reply
      .code(redisReady ? 200 : 503)
      .send({ status: redisReady ? 'ok' : 'unavailable', redis: redis.status });
  });
  const address = await app.listen({ port: config.PORT, host: config.HOST });
  logger.info({ address }, 'gateway listening');
  return {
    app,
    redis,
    url: address,
    async stop() {
      await app.close();
      await requestLog.close();
      clients.close();
      redis.disconnect();
    },
  };
}
