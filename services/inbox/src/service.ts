import { type Bus, CONSUMERS } from '@svc/bus';
import {
  AccountsService,
  createClient,
  IdentityService,
  InboxService,
  PublishingService,
} from '@svc/contracts';
import { createPool } from '@svc/db';
import { AccountsDirectory, WorkspaceDirectory } from '@svc/directory';
import { GraphClient, graphClientConfigFromEnv } from '@svc/graph-client';
import type { Logger } from '@svc/logging';
import { ServiceRuntime } from '@svc/ops';
import { AccountImports } from './account-imports.ts';
import { CatchUp } from './catch-up.ts';
import type { InboxConfig } from './config.ts';
import { inboxHandlers } from './grpc-handlers.ts';
import { InboxEvents } from './inbox-events.ts';
import { InboxStore } from './inbox-store.ts';
import { Intake } from './intake.ts';
import { NetworkLookups } from './network-lookups.ts';
import { PrivateReplies } from './private-replies.ts';
import { Reconciliation, tickMs } from './reconciliation.ts';
import { SendRecords } from './send-records.ts';
import { SendSettlement } from './send-settlement.ts';
import { Sender } from './sender.ts';

const SCHEMA = 'inbox';
/** A history import reads up to 75 threads from the network; its message stays ours meanwhile. */
const CATCH_UP_ACK_WAIT_MS = 120_000;

type Parts = Awaited<ReturnType<typeof openParts>>;

/**
 * Starts the inbox service: the intake of provider webhooks, the history import of newly
 * connected accounts, the record of our published objects, the purge of deleted workspaces, the
 * gRPC API (reads, sends, private replies) and the periodic reconciliation of every account.
 * `now` is injectable for tests (messaging windows).
 */
export function startInbox(config: InboxConfig, logger: Logger, options: { now?: () => Date } = {}) {
  return ServiceRuntime.launch('inbox', logger, config, async (runtime) => {
    const now = options.now ?? (() => new Date());
    const parts = await openParts(runtime, config, logger, now);
    await consumeStreams(runtime, config, parts);
    const port = await serveApi(runtime, config, parts);
    reconcile(runtime, config, parts);
    const opsPort = await runtime.startOps({ port: config.OPS_PORT, host: config.OPS_HOST });
    return { port, opsPort, pool: parts.store.pool };
  });
}

/** The connections and the named collaborators over them, each registered to be closed. */
async function openParts(runtime: ServiceRuntime, config: InboxConfig, logger: Logger, now: () => Date) {
  const pool = createPool(config.DATABASE_URL, SCHEMA, 10, logger);
  runtime.useDatabase(pool);
  const bus: Bus = await runtime.connectBus(config);
  const store = new InboxStore(pool, runtime.outbox(pool, bus, SCHEMA));
  const credential = config.TOKEN_VAULT_CREDENTIAL;
  const accountsClient = createClient(AccountsService, config.ACCOUNTS_GRPC_URL, { credential });
  const identity = runtime.owns('identity client', createClient(IdentityService, config.IDENTITY_GRPC_URL));
  const publishing = runtime.owns(
    'publishing client',
    createClient(PublishingService, config.PUBLISHING_GRPC_URL),
  );
  const workspaces = runtime.owns('workspaces', new WorkspaceDirectory(bus, identity));
  const accounts = runtime.owns(
    'accounts',
    new AccountsDirectory(bus, runtime.owns('accounts client', accountsClient), logger),
  );
  const app = { appId: config.META_APP_ID, appSecret: config.META_APP_SECRET };
  const graph = runtime.owns('Graph client', new GraphClient(graphClientConfigFromEnv(config, app)));
  const lookups = runtime.owns('network lookups', new NetworkLookups(graph, accounts, logger));
  const events = new InboxEvents(store, workspaces, now);
  const imports = new AccountImports(pool, config.INBOX_RECONCILE_INTERVAL_MS);
  const records = new SendRecords(pool);
  const catchUp = new CatchUp({ store, records, imports, accounts, events, graph, logger, now });
  const sending = { store, records, accounts, graph, publishing, events, logger, now };
  const sender = new Sender(sending);
  const privateReplies = new PrivateReplies(sending);
  return {
    bus,
    store,
    records,
    sender,
    privateReplies,
    imports,
    workspaces,
    accounts,
    publishing,
    graph,
    lookups,
    events,
    catchUp,
    logger,
    now,
  };
}

/** Provider webhooks in, history of new and returning accounts, our published objects, purges. */
async function consumeStreams(runtime: ServiceRuntime, config: InboxConfig, parts: Parts) {
  const { bus, store, catchUp } = parts;
  const intake = new Intake({ ...parts, appId: config.META_APP_ID, observer: runtime.busMetrics });
  await runtime.consume(bus, CONSUMERS.inboxProviderWebhooks, (webhook, m) => intake.receive(webhook, m), {
    concurrency: config.INBOX_INTAKE_CONCURRENCY,
  });
  const importing = { ackWaitMs: CATCH_UP_ACK_WAIT_MS };
  await runtime.consume(
    bus,
    CONSUMERS.inboxAccountConnected,
    (event) => catchUp.afterConnect(event.data.account.id),
    importing,
  );
  await runtime.consume(
    bus,
    CONSUMERS.inboxAccountChanged,
    (event) => catchUp.afterChange(event.data.account.id),
    importing,
  );
  await runtime.consume(bus, CONSUMERS.inboxPostEvents, (event) =>
    store.recordPublishedObjects(
      event.data.post.targets.flatMap((target) =>
        target.platform_post_id && typeof target.account === 'string'
          ? [
              {
                accountId: target.account,
                platformId: target.platform_post_id,
                postId: event.data.post.id,
                workspaceId: event.workspace ?? '',
              },
            ]
          : [],
      ),
    ),
  );
  await runtime.consume(bus, CONSUMERS.inboxWorkspaceDeleted, ({ workspace }) =>
    store.purgeWorkspace(workspace),
  );
}

/** The gRPC API: reads, sends, private replies and on-demand history imports. */
async function serveApi(runtime: ServiceRuntime, config: InboxConfig, parts: Parts) {
  return runtime.serveGrpc(config.INBOX_GRPC_ADDRESS, InboxService, inboxHandlers(parts));
}

/**
 * The reconciliation of every imported account (reconciliation.ts): a tick claims the accounts
 * due; sweeps still running at stop end at their next network call, before the outbox relay and
 * the database close.
 */
function reconcile(runtime: ServiceRuntime, config: InboxConfig, parts: Parts): void {
  const settlement = new SendSettlement({ ...parts, settleAfterMs: config.INBOX_SEND_SETTLE_AFTER_MS });
  const reconciliation = new Reconciliation({
    ...parts,
    settlement,
    config: {
      intervalMs: config.INBOX_RECONCILE_INTERVAL_MS,
      lookbackMs: config.INBOX_RECONCILE_LOOKBACK_MS,
      callsPerSecond: config.INBOX_RECONCILE_CALLS_PER_SECOND,
      concurrency: config.INBOX_RECONCILE_CONCURRENCY,
    },
  });
  runtime.every('inbox reconciliation', tickMs(reconciliation.config), () => reconciliation.tick());
  runtime.worker('inbox reconciliation', () => reconciliation.stop());
}
