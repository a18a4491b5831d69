import { type Bus, connectBus, OutboxRelay, runConsumer, SIGNALS } from '@svc/bus';
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
import { AccountsDirectory } from './accounts-directory.ts';
import type { PublishingConfig } from './config.ts';
import { openDatabase, SCHEMA } from './db.ts';
import { publishingHandlers } from './grpc-handlers.ts';
import { LocalMediaStorage } from './media/local-storage.ts';
import { MediaFiles } from './media/media-files.ts';
import { MediaLibrary } from './media/media-library.ts';
import { purgeIdempotencyKeys } from './posts/idempotency.ts';
import { PostChecks } from './posts/post-checks.ts';
import { PostStore } from './posts/post-store.ts';
import { Posts } from './posts/posts.ts';
import { SettlementWatch } from './posts/settlement-watch.ts';
import { PublishJobs } from './publish/publish-job.ts';
import { startPublishWorker } from './publish/publish-worker.ts';
import { Settlement } from './publish/settlement.ts';
import { WorkspaceDirectory } from './workspaces.ts';

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
  const now = options.now ?? (() => new Date());
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
  const accountsClient = createClient(AccountsService, config.ACCOUNTS_GRPC_URL, {
    credential: config.TOKEN_VAULT_CREDENTIAL,
  });
  const graph = new GraphClient(
    graphClientConfigFromEnv(config, { appId: config.META_APP_ID, appSecret: config.META_APP_SECRET }),
  );
  const workspaces = new WorkspaceDirectory(bus, identity);
  const accounts = new AccountsDirectory(bus, accountsClient, logger);
  const store = new PostStore(pool, prisma, relay);
  const files = new MediaFiles(new LocalMediaStorage(config.MEDIA_DIR), config, logger, now);
  const media = new MediaLibrary(prisma, pool, { files, workspaces, posts: store, config, logger, now });
  const posts = new Posts(store, new PostChecks(accounts, media), workspaces, now);
  const settlements = new SettlementWatch(bus, (postId) => store.status(postId));

  const server = new grpc.Server({
    'grpc.max_receive_message_length': MAX_MESSAGE_BYTES,
    'grpc.max_send_message_length': MAX_MESSAGE_BYTES,
  });
  let port = 0;
  if (config.PUBLISHING_ROLE !== 'worker') {
    const handlers = publishingHandlers({ posts, store, accounts, settlements, media, db: prisma, now });
    addService(server, PublishingService, handlers, logger);
    port = await startGrpcServer(server, config.PUBLISHING_GRPC_ADDRESS);
    logger.info({ port }, 'publishing gRPC server listening');
  }
  const settlement = new Settlement(store, workspaces, logger, now);
  const jobs = new PublishJobs({ graph, store, files, logger, now, accounts, settlement });
  const workers =
    config.PUBLISHING_ROLE !== 'api'
      ? [
          await startPublishWorker({ bus, jobs, store, logger, now }),
          await purgeDeletedWorkspaces(bus, logger, store, media),
        ]
      : [];
  const periodic = [
    every(3_600_000, () => relay.purgePublished(), 'purge published outbox rows', logger),
    every(3_600_000, () => purgeIdempotencyKeys({ db: prisma, now }), 'purge idempotency keys', logger),
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
    async stop() {
      for (const job of periodic) clearInterval(job);
      await ops.close();
      await new Promise<void>((resolve) => server.tryShutdown(() => resolve()));
      for (const worker of workers) await worker.stop();
      workspaces.close();
      accounts.close();
      await relay.stop();
      await bus.close();
      accountsClient.close();
      identity.close();
      await prisma.$disconnect();
      await pool.end();
    },
  };
}

/** `workspace.deleted`: posts and targets go, then media records and files. */
function purgeDeletedWorkspaces(bus: Bus, logger: Logger, store: PostStore, media: MediaLibrary) {
  return runConsumer(
    bus,
    logger,
    { stream: 'internal', durable: 'publishing-workspace-deleted', types: [SIGNALS.workspaceDeleted] },
    async (_type, payload) => {
      const workspaceId = (payload as { workspace?: string | null }).workspace;
      if (!workspaceId) return;
      await store.deleteWorkspacePosts(workspaceId);
      await media.purgeWorkspace(workspaceId);
    },
  );
}
