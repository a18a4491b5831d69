import { CONSUMERS } from '@svc/bus';
import { WorkspaceDirectory } from '@svc/directory';
import type { Logger } from '@svc/logging';
import { ServiceRuntime } from '@svc/ops';
import type { FastifyInstance } from 'fastify';
import { Redis } from 'ioredis';
import { buildGateway } from './app.ts';
import { Limiter } from './auth/limiter.ts';
import { connectClients } from './clients.ts';
import type { GatewayConfig } from './config.ts';
import { Idempotency } from './http/idempotency.ts';
import { SharedFileReads } from './http/media-file-reads.ts';
import { HttpMetrics } from './http/metrics.ts';
import { RequestLogBuffer } from './http/request-log.ts';

/** Starts the gateway: Redis (fail closed, never queue commands while disconnected), gRPC clients, HTTP. */
export function startGateway(config: GatewayConfig, logger: Logger) {
  return ServiceRuntime.launch('gateway', logger, config, async (runtime) => {
    const redis = await connectRedis(runtime, config, logger);
    const clients = connectClients({
      identity: config.IDENTITY_GRPC_URL,
      accounts: config.ACCOUNTS_GRPC_URL,
      webhooks: config.WEBHOOKS_GRPC_URL,
      inbox: config.INBOX_GRPC_URL,
      publishing: config.PUBLISHING_GRPC_URL,
    });
    runtime.closeAtEnd('gRPC clients', () => clients.close());
    const bus = await runtime.connectBus(config);
    const requestLog = new RequestLogBuffer(clients.identity, logger);
    runtime.worker('request log', () => requestLog.close());
    const limiter = new Limiter(redis, config.REDIS_PREFIX, config.RATE_LIMIT_WINDOW_MS);
    const idempotency = new Idempotency(redis, config.REDIS_PREFIX, config.ENCRYPTION_KEYS);
    // A deleted workspace's recorded answers leave Redis (one gateway of all handles each deletion).
    await runtime.consume(bus, CONSUMERS.gatewayWorkspaceDeleted, async ({ workspace }) => {
      await idempotency.forgetWorkspace(workspace);
    });
    const workspaces = runtime.owns('workspaces', new WorkspaceDirectory(bus, clients.identity));
    const fileReads = runtime.owns(
      'media file reads',
      new SharedFileReads({
        maxBytes: config.MEDIA_WHOLE_READ_BYTES,
        keepMs: config.MEDIA_FILE_KEEP_SECONDS * 1000,
      }).dropOnDeletions(bus),
    );
    const metrics = new HttpMetrics(runtime.registry);
    const deps = {
      config,
      logger,
      limiter,
      idempotency,
      clients,
      requestLog,
      bus,
      workspaces,
      fileReads,
      metrics,
    };
    const app = buildGateway(deps);
    app.get('/readyz', async (_request, reply) => {
      const { ready, checks } = await runtime.readiness();
      return reply.code(ready ? 200 : 503).send({ status: ready ? 'ok' : 'unavailable', checks });
    });
    const address = await app.listen({ port: config.PORT, host: config.HOST });
    runtime.intake('HTTP server', () => closeGracefully(app, HTTP_GRACE_MS));
    logger.info({ address }, 'gateway listening');
    // /healthz, /readyz and /metrics apart from the public port, like every service's.
    const opsPort = await runtime.startOps({ port: config.OPS_PORT, host: config.OPS_HOST });
    return { app, redis, url: address, opsPort };
  });
}

/** How long requests in flight may take to finish at stop before their connections are cut. */
const HTTP_GRACE_MS = 10_000;

/** Graceful, then forced once the grace is over (as the runtime stops gRPC servers). */
function closeGracefully(app: FastifyInstance, graceMs: number): Promise<void> {
  const force = setTimeout(() => app.server.closeAllConnections(), graceMs);
  force.unref();
  return app.close().finally(() => clearTimeout(force));
}

async function connectRedis(runtime: ServiceRuntime, config: GatewayConfig, logger: Logger): Promise<Redis> {
  const redis = new Redis(config.REDIS_URL, {
    enableOfflineQueue: false,
    maxRetriesPerRequest: 0,
    commandTimeout: 1_000,
    retryStrategy: (attempt) => Math.min(attempt * 100, 2_000),
    // Not auto-pipelined: each request sends its script from its own turn of the event loop, so
    // a pipeline would carry one command and add its bookkeeping to every request.
  });
  redis.on('error', (err) => logger.warn({ err: err.message }, 'Redis connection problem'));
  runtime.closeAtEnd('redis', () => redis.disconnect());
  await new Promise<void>((resolve) =>
    redis.status === 'ready' ? resolve() : redis.once('ready', () => resolve()),
  );
  // The connection's state, not a round trip: every request already fails closed without Redis.
  runtime.readyWhen('redis', async () => {
    if (redis.status !== 'ready') throw new Error(redis.status);
  });
  return redis;
}
