import { CONSUMERS } from '@svc/bus';
import { AccountsService, createClient, IdentityService } from '@svc/contracts';
import { WorkspaceDirectory } from '@svc/directory';
import { GraphClient, graphClientConfigFromEnv } from '@svc/graph-client';
import type { Logger } from '@svc/logging';
import { ServiceRuntime } from '@svc/ops';
import { AccountLifecycle } from './account-lifecycle.ts';
import { AccountRefresh } from './account-refresh.ts';
import { AccountStore } from './account-store.ts';
import { Accounts } from './accounts.ts';
import type { AccountsConfig } from './config.ts';
import { ConnectCandidates } from './connect-candidates.ts';
import { ConnectFlow } from './connect-flow.ts';
import { ConnectLinks } from './connect-links.ts';
import { ConnectPage } from './connect-page.ts';
import { ConnectStore } from './connect-store.ts';
import { ConnectedAccounts } from './connected-accounts.ts';
import { ConsentDialog } from './consent-dialog.ts';
import { openDatabase, SCHEMA } from './db.ts';
import { EmbedSessions } from './embed-sessions.ts';
import { ExpirySweep } from './expiry-sweep.ts';
import { accountsHandlers } from './grpc-handlers.ts';
import { OAuthStates } from './oauth-state.ts';
import { PageChoices } from './page-choices.ts';
import { ProviderWebhooks } from './provider-webhooks.ts';
import { TokenVault } from './token-vault.ts';
import { VaultClients } from './vault-clients.ts';
import { WorkspacePurge } from './workspace-purge.ts';

const HOUR_MS = 3_600_000;

type Collaborators = Awaited<ReturnType<typeof openCollaborators>>;

/**
 * Starts the accounts service: gRPC server, outbox relay, the consumers of `workspace.deleted`
 * and of provider webhooks, and the expiry sweeper. `now` is injectable for tests.
 */
export function startAccounts(config: AccountsConfig, logger: Logger, options: { now?: () => Date } = {}) {
  return ServiceRuntime.launch('accounts', logger, config, async (runtime) => {
    const now = options.now ?? (() => new Date());
    const parts = await openCollaborators(runtime, config, logger, now);
    const port = await serveApi(runtime, config, parts);
    await runBackground(runtime, config, parts);
    const opsPort = await runtime.startOps({ port: config.OPS_PORT, host: config.OPS_HOST });
    const { prisma, pool, store, vault, workspaces } = parts;
    return { port, opsPort, prisma, pool, store, vault, workspaces };
  });
}

/** The connections and the collaborators every part shares, each registered to be closed. */
async function openCollaborators(
  runtime: ServiceRuntime,
  config: AccountsConfig,
  logger: Logger,
  now: () => Date,
) {
  const { pool, prisma } = openDatabase(config.DATABASE_URL, logger);
  runtime.useDatabase(pool, prisma);
  const bus = await runtime.connectBus(config);
  const relay = runtime.outbox(pool, bus, SCHEMA);
  const identity = runtime.owns('identity client', createClient(IdentityService, config.IDENTITY_GRPC_URL));
  const workspaces = runtime.owns('workspaces', new WorkspaceDirectory(bus, identity));
  const app = { appId: config.META_APP_ID, appSecret: config.META_APP_SECRET };
  const graph = runtime.owns(
    'Graph client',
    new GraphClient({ ...graphClientConfigFromEnv(config, app), observer: runtime.graphMetrics() }),
  );
  const store = new AccountStore(pool, prisma, relay);
  const connects = new ConnectStore(prisma);
  const vault = new TokenVault(config.ENCRYPTION_KEYS);
  const lifecycle = new AccountLifecycle(store, workspaces, config, logger, now);
  return { pool, prisma, bus, identity, workspaces, graph, store, connects, vault, lifecycle, logger, now };
}

/** The gRPC API: the partner's account operations, the hosted connect pages and the token vault. */
async function serveApi(runtime: ServiceRuntime, config: AccountsConfig, parts: Collaborators) {
  const { identity, workspaces, graph, store, connects, vault, lifecycle, logger, now } = parts;
  const links = new ConnectLinks(connects, workspaces, new EmbedSessions(identity), config, now);
  const connected = new ConnectedAccounts(
    new ConnectCandidates(graph, logger),
    store,
    vault,
    workspaces,
    now,
  );
  const flow = new ConnectFlow(
    links,
    new OAuthStates(connects, config, now),
    new ConsentDialog(graph, config),
    new PageChoices(connects, vault, now),
    connected,
    identity,
  );
  const handlers = accountsHandlers({
    store,
    accounts: new Accounts(store, workspaces),
    refresh: new AccountRefresh(store, vault, graph, workspaces, lifecycle),
    lifecycle,
    links,
    page: new ConnectPage(links, store, workspaces, identity),
    flow,
    vault,
    vaultClients: new VaultClients(config.TOKEN_VAULT_CLIENTS),
    logger,
  });
  return runtime.serveGrpc(config.ACCOUNTS_GRPC_ADDRESS, AccountsService, handlers);
}

/** The consumers of `workspace.deleted` and of provider webhooks, the expiry sweep and the purges. */
async function runBackground(runtime: ServiceRuntime, config: AccountsConfig, parts: Collaborators) {
  const { bus, workspaces, store, connects, logger, now } = parts;
  const purge = new WorkspacePurge(connects, store, logger);
  await runtime.consume(bus, CONSUMERS.accountsWorkspaceDeleted, (signal) => purge.purge(signal));
  const webhooks = new ProviderWebhooks(store, workspaces, logger);
  await runtime.consume(bus, CONSUMERS.accountsProviderWebhooks, (webhook) => webhooks.handle(webhook.body));
  const sweep = new ExpirySweep(store, workspaces, now);
  runtime.every('expiry sweep', config.EXPIRY_SWEEP_MS, () => sweep.run());
  runtime.every('purge spent OAuth states', HOUR_MS, () => connects.purgeSpent(now()));
}
