import { type Bus, CONSUMERS } from '@svc/bus';
import { WebhooksService } from '@svc/contracts';
import type { Logger } from '@svc/logging';
import { type Resolver, systemResolver } from '@svc/net';
import { ServiceRuntime } from '@svc/ops';
import type pg from 'pg';
import { type Clock, systemClock } from './clock.ts';
import type { WebhooksConfig } from './config.ts';
import { openDatabase } from './db.ts';
import { forgetWorkspace, purgeDeletedWorkspaces } from './deleted-workspaces.ts';
import { WebhookTransport } from './delivery/transport.ts';
import { DeliveryWorker } from './delivery/worker.ts';
import { consumeEvents } from './events-consumer.ts';
import { webhooksHandlers } from './grpc-handlers.ts';
import { DeliveryMetrics } from './metrics.ts';
import { purgeExpiredEvents } from './retention.ts';

/** What tests may replace: the clock the schedule runs on, and DNS. */
export interface WebhooksOverrides {
  clock?: Clock;
  resolver?: Resolver;
}

/**
 * Starts the webhooks service: by WEBHOOKS_ROLE, the gRPC server, or the event store consumer,
 * the delivery loop and the periodic purge, or all of them. An API-only process still builds a
 * delivery worker without its loop: a test ping is sent by the call that asks for it.
 */
export function startWebhooks(config: WebhooksConfig, logger: Logger, overrides: WebhooksOverrides = {}) {
  const clock = overrides.clock ?? systemClock;
  const resolver = overrides.resolver ?? systemResolver;
  const allowPrivateNetworks = config.WEBHOOK_ALLOW_PRIVATE_NETWORKS;
  if (allowPrivateNetworks) {
    logger.warn(
      'DEVELOPMENT MODE: webhook deliveries may reach loopback and private addresses, and http:// is accepted for loopback URLs (WEBHOOK_ALLOW_PRIVATE_NETWORKS). Never run production like this.',
    );
  }
  return ServiceRuntime.launch('webhooks', logger, config, async (runtime) => {
    const { pool, prisma } = openDatabase(config.DATABASE_URL, logger);
    runtime.useDatabase(pool, prisma);
    const bus = await runtime.connectBus(config);
    const metrics = new DeliveryMetrics(runtime.registry);
    const role = config.WEBHOOKS_ROLE;
    const deps = { pool, clock, resolver, logger, metrics };
    const worker = startDeliveryWorker(runtime, config, deps, { loop: role !== 'api' });
    if (role !== 'api') {
      const ackWaitMs = config.EVENT_STORE_ACK_WAIT_MS;
      const observer = runtime.busMetrics;
      const events = await consumeEvents({ bus, pool, clock, logger, worker, metrics, ackWaitMs, observer });
      runtime.adoptConsumer(events, bus, CONSUMERS.webhooksStore);
      runtime.every('purge expired events', 3_600_000, () =>
        purgeExpiredEvents(pool, clock.now(), config.EVENT_RETENTION_DAYS),
      );
      await purgeOnWorkspaceDeletion(runtime, bus, pool, clock, config.EVENT_RETENTION_DAYS);
    }
    const policy = { allowPrivateNetworks, resolver };
    const handlers = webhooksHandlers({
      db: prisma,
      pool,
      keyring: config.ENCRYPTION_KEYS,
      clock,
      policy,
      worker,
    });
    const port = role === 'worker' ? 0 : await serveApi(runtime, config, handlers);
    const opsPort = await runtime.startOps({ port: config.OPS_PORT, host: config.OPS_HOST });
    return { port, pool, prisma, worker, opsPort };
  });
}

/**
 * `workspace.deleted` purges the workspace's events at once (those announcing the deletion stay
 * for a grace period); a pass every 10 minutes ends those grace periods and catches what a race
 * with the deletion stored.
 */
async function purgeOnWorkspaceDeletion(
  runtime: ServiceRuntime,
  bus: Bus,
  pool: pg.Pool,
  clock: Clock,
  retentionDays: number,
): Promise<void> {
  await runtime.consume(bus, CONSUMERS.webhooksWorkspaceDeleted, async (signal) => {
    const purged = await forgetWorkspace(pool, signal, clock.now());
    runtime.logger.info({ workspace: signal.workspace, events: purged }, 'deleted workspace: events purged');
  });
  runtime.every('purge deleted workspaces', 600_000, () =>
    purgeDeletedWorkspaces(pool, clock.now(), { retentionDays }),
  );
}

/** The gRPC API (webhook settings, events, attempts, test pings). */
async function serveApi(
  runtime: ServiceRuntime,
  config: WebhooksConfig,
  handlers: ReturnType<typeof webhooksHandlers>,
): Promise<number> {
  return runtime.serveGrpc(config.WEBHOOKS_GRPC_ADDRESS, WebhooksService, handlers);
}

/**
 * The delivery worker and the HTTP transport under it, stopped and closed by the runtime; with
 * `loop`, it claims due attempts (without, it only sends what a caller hands it, a test ping).
 */
function startDeliveryWorker(
  runtime: ServiceRuntime,
  config: WebhooksConfig,
  deps: { pool: pg.Pool; clock: Clock; resolver: Resolver; logger: Logger; metrics: DeliveryMetrics },
  { loop }: { loop: boolean },
): DeliveryWorker {
  const transport = new WebhookTransport({
    timeoutMs: config.WEBHOOK_TIMEOUT_MS,
    allowPrivateNetworks: config.WEBHOOK_ALLOW_PRIVATE_NETWORKS,
    resolver: deps.resolver,
  });
  runtime.closeAtEnd('webhook transport', () => transport.close());
  const worker = new DeliveryWorker(
    deps.pool,
    config.ENCRYPTION_KEYS,
    transport,
    deps.clock,
    deps.logger,
    {
      concurrency: config.WEBHOOK_CONCURRENCY,
      perEndpoint: config.WEBHOOK_CONCURRENCY_PER_ENDPOINT,
      retrySharePercent: config.WEBHOOK_RETRY_SHARE_PERCENT,
      pollMs: config.WEBHOOK_POLL_MS,
      timeoutMs: config.WEBHOOK_TIMEOUT_MS,
    },
    deps.metrics,
  );
  if (loop) worker.start();
  runtime.worker('delivery worker', () => worker.stop());
  return worker;
}
