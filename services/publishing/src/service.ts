import { connectBus, OutboxRelay, WorkspaceCache } from '@svc/bus';
import {
  AccountsService,
  addService,
  createClient,
  grpc,
  IdentityService,
  PublishingService,
  startGrpcServer,
} from '@svc/contracts';
import { GraphClient, graphClientConfigFromEnv } from '@svc/graph-client';
import type { Logger } from '@svc/logging';
import { every, startOpsServer } from '@svc/ops';
import type { PublishingConfig } from './config.ts';
import type { PublishingContext } from './context.ts';
import { openDatabase, SCHEMA } from './db.ts';
import { describeWorkspace } from './events.ts';
import { publishingHandlers } from './grpc-handlers.ts';
import { accountTokens, knownAccounts } from './kept-accounts.ts';
import { LocalMediaStorage } from './media/local-storage.ts';
import { purgeIdempotencyKeys } from './posts/idempotency.ts';
import { SettlementWatch } from './posts/wait.ts';
import { startWorkers } from './workers.ts';

/** Media travel inside gRPC messages (uploads and the signed-URL reads): allow them in full. */
const MAX_MESSAGE_BYTES = 64 * 1024 * 1024;

/**
 * Starts the publishing service: gRPC server, outbox relay, the publish workers and scheduler,
 * and the consumer of `workspace.deleted`. `now` is injectable for tests.
 */
export async function startPublishing(
  config: PublishingConfig,
  logger: Logger,
  options: { now?: () => Date } = {},
) {
  const { pool, prisma } = openDatabase(config.DATABASE_URL);
  const bus = await connectBus({
    url: config.NATS_URL,
    prefix: config.NATS_PREFIX,
    name: 'publishing',
    logger,
  });
  const relay = new OutboxRelay(pool, bus, logger, { schema: SCHEMA });
  relay.start();
  const identity = createClient(IdentityService, config.IDENTITY_GRPC_URL);
  const accounts = createClient(AccountsService, config.ACCOUNTS_GRPC_URL, {
    credential: config.TOKEN_VAULT_CREDENTIAL,
  });
  const ctx: PublishingContext = {
    db: prisma,
    pool,
    graph: new GraphClient(
      graphClientConfigFromEnv(config, { appId: config.META_APP_ID, appSecret: config.META_APP_SECRET }),
    ),
    accounts,
    identity,
    relay,
    workspaces: new WorkspaceCache(bus, (workspaceId) => describeWorkspace(identity, workspaceId)),
    tokens: accountTokens(bus, accounts),
    knownAccounts: knownAccounts(bus, accounts),
    settlements: new SettlementWatch(bus, pool),
    bus,
    storage: new LocalMediaStorage(config.MEDIA_DIR),
    config,
    logger,
    now: options.now ?? (() => new Date()),
  };

  const server = new grpc.Server({
    'grpc.max_receive_message_length': MAX_MESSAGE_BYTES,
    'grpc.max_send_message_length': MAX_MESSAGE_BYTES,
  });
  let port = 0;
  if (config.PUBLISHING_ROLE !== 'worker') {
    addService(server, PublishingService, publishingHandlers(ctx), logger);
    port = await startGrpcServer(server, config.PUBLISHING_GRPC_ADDRESS);
    logger.info({ port }, 'publishing gRPC server listening');
  }
  const workers = config.PUBLISHING_ROLE !== 'api' ? await startWorkers(ctx) : undefined;
  const jobs = [
    every(3_600_000, () => relay.purgePublished(), 'purge published outbox rows', logger),
    every(3_600_000, () => purgeIdempotencyKeys(ctx), 'purge idempotency keys', logger),
  ];
  const ops = await startOpsServer({
    service: 'publishing',
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
      await workers?.stop();
      ctx.workspaces.close();
      ctx.tokens.close();
      ctx.knownAccounts.close();
      await relay.stop();
      await bus.close();
      ctx.accounts.close();
      ctx.identity.close();
      await prisma.$disconnect();
      await pool.end();
    },
  };
}
