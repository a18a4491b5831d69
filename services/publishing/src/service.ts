import { type Bus, CONSUMERS } from '@svc/bus';
import { AccountsService, createClient, IdentityService, PublishingService } from '@svc/contracts';
import { AccountsDirectory, WorkspaceDirectory } from '@svc/directory';
import { GraphClient, graphClientConfigFromEnv } from '@svc/graph-client';
import type { Logger } from '@svc/logging';
import { ServiceRuntime } from '@svc/ops';
import type { PublishingConfig } from './config.ts';
import { openDatabase, SCHEMA } from './db.ts';
import { publishingHandlers } from './grpc-handlers.ts';
import { MediaFiles } from './media/media-files.ts';
import { MediaLibrary } from './media/media-library.ts';
import { openMediaStorage } from './media/storage-driver.ts';
import { purgeIdempotencyKeys } from './posts/idempotency.ts';
import { PostChecks } from './posts/post-checks.ts';
import { PostStore } from './posts/post-store.ts';
import { Posts } from './posts/posts.ts';
import { SettlementWatch } from './posts/settlement-watch.ts';
import { PublishJobs } from './publish/publish-job.ts';
import { PublishMetrics } from './publish/publish-metrics.ts';
import { runPublishWorker } from './publish/publish-worker.ts';
import { Settlement } from './publish/settlement.ts';

/** Media travel inside gRPC messages (uploads and the signed-URL reads): allow them in full. */
const MAX_MESSAGE_BYTES = 64 * 1024 * 1024;
const HOUR_MS = 3_600_000;

type Collaborators = Awaited<ReturnType<typeof openCollaborators>>;

/**
 * Starts the publishing service: by PUBLISHING_ROLE, the gRPC API, the publish worker and the
 * scheduler, or both; the consumer of `workspace.deleted` runs beside the workers. `now` is
 * injectable for tests.
 */
export function startPublishing(
  config: PublishingConfig,
  logger: Logger,
  options: { now?: () => Date } = {},
) {
  return ServiceRuntime.launch('publishing', logger, config, async (runtime) => {
    const now = options.now ?? (() => new Date());
    const parts = await openCollaborators(runtime, config, logger, now);
    const port = config.PUBLISHING_ROLE === 'worker' ? 0 : await serveApi(runtime, config, parts);
    if (config.PUBLISHING_ROLE !== 'api') await runWorkers(runtime, parts, config.PUBLISH_CONCURRENCY);
    const { prisma, pool } = parts;
    runtime.every('purge idempotency keys', HOUR_MS, () => purgeIdempotencyKeys({ db: prisma, now }));
    const opsPort = await runtime.startOps({ port: config.OPS_PORT, host: config.OPS_HOST });
    return { port, opsPort, prisma, pool };
  });
}

/** The connections and the named collaborators over them, each registered to be closed. */
async function openCollaborators(
  runtime: ServiceRuntime,
  config: PublishingConfig,
  logger: Logger,
  now: () => Date,
) {
  const { pool, prisma } = openDatabase(config.DATABASE_URL, logger);
  runtime.useDatabase(pool, prisma);
  const bus = await runtime.connectBus(config);
  const relay = runtime.outbox(pool, bus, SCHEMA);
  const store = new PostStore(pool, prisma, relay);
  const workspaces = runtime.owns('workspaces', new WorkspaceDirectory(bus, identityClient(runtime, config)));
  const accounts = runtime.owns(
    'accounts',
    new AccountsDirectory(bus, accountsClient(runtime, config), logger),
  );
  const storage = runtime.owns('media storage', openMediaStorage(config));
  const files = new MediaFiles(storage, config, logger, now);
  const deps = { files, workspaces, posts: store, relay, config, logger, now };
  const media = runtime.owns('media library', new MediaLibrary(prisma, pool, deps));
  const app = { appId: config.META_APP_ID, appSecret: config.META_APP_SECRET };
  const graph = runtime.owns(
    'Graph client',
    new GraphClient({ ...graphClientConfigFromEnv(config, app), observer: runtime.graphMetrics() }),
  );
  return { pool, prisma, bus, store, workspaces, accounts, media, files, graph, logger, now };
}

/** The gRPC API: posts and media, and `wait=true` on the settlement events. */
async function serveApi(runtime: ServiceRuntime, config: PublishingConfig, parts: Collaborators) {
  const { bus, store, accounts, media, workspaces, prisma, now } = parts;
  const posts = new Posts(store, new PostChecks(accounts, media), workspaces, now);
  const settlements = new SettlementWatch(bus, (postId) => store.status(postId));
  const handlers = publishingHandlers({ posts, store, accounts, settlements, media, db: prisma, now });
  return runtime.serveGrpc(config.PUBLISHING_GRPC_ADDRESS, PublishingService, handlers, {
    maxMessageBytes: MAX_MESSAGE_BYTES,
  });
}

/** The publish worker and scheduler, and the purge of deleted workspaces. */
async function runWorkers(runtime: ServiceRuntime, parts: Collaborators, concurrency: number): Promise<void> {
  const { bus, store, workspaces, logger, now } = parts;
  const settlement = new Settlement(store, workspaces, logger, now);
  const jobs = new PublishJobs({ ...parts, settlement, metrics: new PublishMetrics(runtime.registry) });
  await runPublishWorker(runtime, { bus, jobs, store, now, concurrency });
  await purgeDeletedWorkspaces(runtime, bus, parts);
}

/** `workspace.deleted`: posts and targets go, then media records and files. */
async function purgeDeletedWorkspaces(runtime: ServiceRuntime, bus: Bus, { store, media }: Collaborators) {
  await runtime.consume(bus, CONSUMERS.publishingWorkspaceDeleted, async (deleted) => {
    const { partner, workspace, external_id } = deleted;
    await store.deleteWorkspacePosts(workspace);
    await media.purgeWorkspace({ partner, workspace, external_id: external_id ?? null });
  });
}

function identityClient(runtime: ServiceRuntime, config: PublishingConfig) {
  return runtime.owns('identity client', createClient(IdentityService, config.IDENTITY_GRPC_URL));
}

/** Accounts' client, with this service's credential for the token vault. */
function accountsClient(runtime: ServiceRuntime, config: PublishingConfig) {
  const credential = config.TOKEN_VAULT_CREDENTIAL;
  return runtime.owns(
    'accounts client',
    createClient(AccountsService, config.ACCOUNTS_GRPC_URL, { credential }),
  );
}
