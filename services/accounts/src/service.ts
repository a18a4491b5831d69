import { connectBus, type EventEnvelope, OutboxRelay, runConsumer, SIGNALS } from '@svc/bus';
import {
  AccountsService,
  addService,
  createClient,
  grpc,
  IdentityService,
  startGrpcServer,
} from '@svc/contracts';
import { GraphClient, graphClientConfigFromEnv } from '@svc/graph-client';
import type { Logger } from '@svc/logging';
import { every, startOpsServer } from '@svc/ops';
import type { AccountsConfig } from './config.ts';
import type { AccountsContext } from './context.ts';
import { openDatabase, SCHEMA } from './db.ts';
import { accountsHandlers } from './grpc-handlers.ts';
import { purgeSpentFlowRows, purgeWorkspace, sweepExpired } from './lifecycle.ts';
import { handleProviderWebhook } from './provider-webhooks.ts';
import { VaultClients } from './vault.ts';

/**
 * Starts the accounts service: gRPC server, outbox relay, the consumers of `workspace.deleted`
 * and of provider webhooks, and the expiry sweeper. `now` is injectable for tests.
 */
export async function startAccounts(
  config: AccountsConfig,
  logger: Logger,
  options: { now?: () => Date } = {},
) {
  const { pool, prisma } = openDatabase(config.DATABASE_URL);
  const identity = createClient(IdentityService, config.IDENTITY_GRPC_URL);
  const bus = await connectBus({
    url: config.NATS_URL,
    prefix: config.NATS_PREFIX,
    name: 'accounts',
    logger,
  });
  const relay = new OutboxRelay(pool, bus, logger, { schema: SCHEMA });
  relay.start();
  const ctx: AccountsContext = {
    db: prisma,
    pool,
    graph: new GraphClient(
      graphClientConfigFromEnv(config, { appId: config.META_APP_ID, appSecret: config.META_APP_SECRET }),
    ),
    keyring: config.ENCRYPTION_KEYS,
    identity,
    relay,
    config,
    logger,
    now: options.now ?? (() => new Date()),
  };

  const server = new grpc.Server();
  addService(
    server,
    AccountsService,
    accountsHandlers(ctx, new VaultClients(config.TOKEN_VAULT_CLIENTS)),
    logger,
  );
  const port = await startGrpcServer(server, config.ACCOUNTS_GRPC_ADDRESS);
  logger.info({ port }, 'accounts gRPC server listening');

  const consumers = [
    await runConsumer(
      bus,
      logger,
      { stream: 'internal', durable: 'accounts-workspace-deleted', types: [SIGNALS.workspaceDeleted] },
      (_type, payload) => purgeWorkspace(ctx, payload as EventEnvelope),
    ),
    await runConsumer(
      bus,
      logger,
      { stream: 'provider', durable: 'accounts-provider-webhooks', types: [SIGNALS.metaWebhook] },
      (_type, payload) => handleProviderWebhook(ctx, (payload as { body: string }).body),
    ),
  ];
  const jobs = [
    every(config.EXPIRY_SWEEP_MS, () => sweepExpired(ctx), 'expiry sweep', logger),
    every(3_600_000, () => purgeSpentFlowRows(ctx), 'purge spent OAuth states', logger),
    every(3_600_000, () => relay.purgePublished(), 'purge published outbox rows', logger),
  ];
  const ops = await startOpsServer({
    service: 'accounts',
    port: config.OPS_PORT,
    logger,
    checks: { database: () => pool.query('SELECT 1'), nats: () => bus.nc.flush() },
  });

  return {
    port,
    opsPort: ops.port,
    prisma,
    pool,
    context: ctx,
    async stop() {
      for (const job of jobs) clearInterval(job);
      await ops.close();
      await new Promise<void>((resolve) => server.tryShutdown(() => resolve()));
      for (const consumer of consumers) await consumer.stop();
      await relay.stop();
      await bus.close();
      identity.close();
      await prisma.$disconnect();
      await pool.end();
    },
  };
}
