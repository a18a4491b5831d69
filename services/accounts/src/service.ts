import { type Bus, CONSUMERS, OutboxRelay } from '@svc/bus';
import { AccountsService, createClient, IdentityService } from '@svc/contracts';
import { GraphClient, graphClientConfigFromEnv } from '@svc/graph-client';
import type { Logger } from '@svc/logging';
import { ServiceRuntime } from '@svc/ops';
import type { AccountsConfig } from './config.ts';
import type { AccountsContext } from './context.ts';
import { openDatabase, SCHEMA } from './db.ts';
import { accountsHandlers } from './grpc-handlers.ts';
import { purgeSpentFlowRows, purgeWorkspace, sweepExpired } from './lifecycle.ts';
import { handleProviderWebhook } from './provider-webhooks.ts';
import { VaultClients } from './vault.ts';

const HOUR_MS = 3_600_000;

/**
 * Starts the accounts service: gRPC server, outbox relay, the consumers of `workspace.deleted`
 * and of provider webhooks, and the expiry sweeper. `now` is injectable for tests.
 */
export function startAccounts(config: AccountsConfig, logger: Logger, options: { now?: () => Date } = {}) {
  return ServiceRuntime.launch('accounts', logger, config, async (runtime) => {
    const { ctx, bus } = await openContext(runtime, config, logger, options.now ?? (() => new Date()));
    const vaultClients = new VaultClients(config.TOKEN_VAULT_CLIENTS);
    const handlers = accountsHandlers(ctx, vaultClients);
    const port = await runtime.serveGrpc(config.ACCOUNTS_GRPC_ADDRESS, AccountsService, handlers);

    await runtime.consume(bus, CONSUMERS.accountsWorkspaceDeleted, (signal) => purgeWorkspace(ctx, signal));
    await runtime.consume(bus, CONSUMERS.accountsProviderWebhooks, (webhook) =>
      handleProviderWebhook(ctx, webhook.body),
    );
    runtime.every('expiry sweep', config.EXPIRY_SWEEP_MS, () => sweepExpired(ctx));
    runtime.every('purge spent OAuth states', HOUR_MS, () => purgeSpentFlowRows(ctx));
    const opsPort = await runtime.startOps({ port: config.OPS_PORT, host: config.OPS_HOST });
    return { port, opsPort, prisma: ctx.db, pool: ctx.pool, context: ctx };
  });
}

/** The connections the operations share, each registered with the runtime that closes it. */
async function openContext(
  runtime: ServiceRuntime,
  config: AccountsConfig,
  logger: Logger,
  now: () => Date,
): Promise<{ ctx: AccountsContext; bus: Bus }> {
  const { pool, prisma } = openDatabase(config.DATABASE_URL, logger);
  runtime.useDatabase(pool, prisma);
  const identity = createClient(IdentityService, config.IDENTITY_GRPC_URL);
  runtime.closeAtEnd('identity client', () => identity.close());
  const bus = await runtime.connectBus(config);
  const graph = new GraphClient(
    graphClientConfigFromEnv(config, { appId: config.META_APP_ID, appSecret: config.META_APP_SECRET }),
  );
  runtime.closeAtEnd('Graph client', () => graph.close());
  const relay = runtime.outbox(new OutboxRelay(pool, bus, logger, { schema: SCHEMA }));
  const ctx = {
    db: prisma,
    pool,
    graph,
    keyring: config.ENCRYPTION_KEYS,
    identity,
    relay,
    config,
    logger,
    now,
  };
  return { ctx, bus };
}
