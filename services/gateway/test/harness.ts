import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { Writable } from 'node:stream';
import { accountsConfigSchema } from '@svc/accounts/config';
import { startAccounts } from '@svc/accounts/service';
import { parseConfig } from '@svc/config';
import { type RunningSandbox, sandboxConfig, startSandbox } from '@svc/graph-sandbox';
import { identityConfigSchema } from '@svc/identity/config';
import { startIdentity } from '@svc/identity/service';
import { createLogger } from '@svc/logging';
import { publishingConfigSchema } from '@svc/publishing/config';
import { startPublishing } from '@svc/publishing/service';
import { createTestDatabase, uniquePrefix } from '@svc/testing';
import { webhooksConfigSchema } from '@svc/webhooks/config';
import { startWebhooks } from '@svc/webhooks/service';
import { gatewayConfigSchema } from '../src/config.ts';
import { startGateway } from '../src/service.ts';
import { freePort } from './http.ts';

/**
 * A real stack for one test file: a fresh database cloned from the migrated template, its own
 * Redis key prefix and NATS stream prefix, identity and one or more gateways in this process,
 * talking over real gRPC/HTTP. Every log line is captured so tests can assert on it.
 */
export interface Stack {
  databaseUrl: string;
  prefix: string;
  logs: Record<string, unknown>[];
  identity: Awaited<ReturnType<typeof startIdentity>>;
  accounts: Awaited<ReturnType<typeof startAccounts>>;
  webhooks: Awaited<ReturnType<typeof startWebhooks>>;
  publishing: Awaited<ReturnType<typeof startPublishing>>;
  /** This stack's media volume (a fresh temporary folder). */
  mediaDir: string;
  sandbox: RunningSandbox;
  gateway: Awaited<ReturnType<typeof startGateway>>;
  /** The graph-sandbox's control API (`/__sandbox/...`), JSON in and out. */
  sandboxControl<T = Record<string, unknown>>(method: string, path: string, body?: unknown): Promise<T>;
  startGateway(env?: Record<string, string>): Promise<Awaited<ReturnType<typeof startGateway>>>;
  /** Another publishing process of this stack that runs only the publish workers (PUBLISHING_ROLE=worker). */
  startPublishingWorker(): Promise<Awaited<ReturnType<typeof startPublishing>>>;
  createPartner(slug?: string): Promise<{ partnerId: string; key: string }>;
  stop(): Promise<void>;
}

export async function startStack(env: Record<string, string> = {}): Promise<Stack> {
  const databaseUrl = await createTestDatabase();
  const prefix = uniquePrefix();
  const logs: Record<string, unknown>[] = [];
  const destination = new Writable({
    write(chunk, _encoding, done) {
      for (const line of String(chunk).split('\n').filter(Boolean)) logs.push(JSON.parse(line));
      done();
    },
  });
  const common = {
    APP_ENV: 'development',
    DATABASE_URL: databaseUrl,
    REDIS_PREFIX: `${prefix}:`,
    NATS_PREFIX: prefix,
    LOG_LEVEL: 'info',
    ...env,
  };
  const identityConfig = parseConfig(identityConfigSchema(common), {
    ...common,
    IDENTITY_GRPC_ADDRESS: '127.0.0.1:0',
    OPS_PORT: '0',
  });
  const identity = await startIdentity(
    identityConfig,
    createLogger('identity', { destination, level: common.LOG_LEVEL }),
  );
  // The gateway's address is known up front: accounts builds connect URLs and the OAuth redirect
  // URI from it, and the sandbox sends webhooks and deauthorize callbacks to it.
  const gatewayPort = await freePort();
  const gatewayUrl = `http://127.0.0.1:${gatewayPort}`;
  const sandbox = await startSandbox(
    sandboxConfig({
      port: 0,
      webhookUrl: `${gatewayUrl}/webhooks/meta`,
      deauthorizeUrl: `${gatewayUrl}/webhooks/meta/deauthorize`,
      containerProcessingMs: 0,
      webhookRetries: 0,
      logLevel: 'silent',
    }),
  );
  const accountsEnv = {
    ...common,
    ACCOUNTS_GRPC_ADDRESS: '127.0.0.1:0',
    OPS_PORT: '0',
    IDENTITY_GRPC_URL: `127.0.0.1:${identity.port}`,
    GRAPH_API_BASE_URL: sandbox.url,
    FACEBOOK_DIALOG_URL: sandbox.url,
    GRAPH_API_RETRY_BASE_MS: '10',
    PUBLIC_BASE_URL: gatewayUrl,
  };
  const accounts = await startAccounts(
    parseConfig(accountsConfigSchema(accountsEnv), accountsEnv),
    createLogger('accounts', { destination, level: common.LOG_LEVEL }),
  );
  const webhooksEnv = { ...common, WEBHOOKS_GRPC_ADDRESS: '127.0.0.1:0', OPS_PORT: '0' };
  const webhooks = await startWebhooks(
    parseConfig(webhooksConfigSchema(webhooksEnv), webhooksEnv),
    createLogger('webhooks', { destination, level: common.LOG_LEVEL }),
  );
  const mediaDir = await mkdtemp(path.join(tmpdir(), 'svc-media-'));
  const publishingEnv = {
    ...common,
    PUBLISHING_GRPC_ADDRESS: '127.0.0.1:0',
    OPS_PORT: '0',
    IDENTITY_GRPC_URL: `127.0.0.1:${identity.port}`,
    ACCOUNTS_GRPC_URL: `127.0.0.1:${accounts.port}`,
    GRAPH_API_BASE_URL: sandbox.url,
    GRAPH_API_RETRY_BASE_MS: '10',
    PUBLIC_BASE_URL: gatewayUrl,
    MEDIA_DIR: mediaDir,
  };
  const publishings: Awaited<ReturnType<typeof startPublishing>>[] = [];
  const launchPublishing = async (extra: Record<string, string> = {}) => {
    const instanceEnv = { ...publishingEnv, ...extra };
    const instance = await startPublishing(
      parseConfig(publishingConfigSchema(instanceEnv), instanceEnv),
      createLogger('publishing', { destination, level: common.LOG_LEVEL }),
    );
    publishings.push(instance);
    return instance;
  };
  const publishing = await launchPublishing();
  const gateways: Awaited<ReturnType<typeof startGateway>>[] = [];
  const launchGateway = async (extra: Record<string, string> = {}) => {
    const gatewayEnv = {
      ...common,
      PORT: gateways.length === 0 ? String(gatewayPort) : '0',
      IDENTITY_GRPC_URL: `127.0.0.1:${identity.port}`,
      ACCOUNTS_GRPC_URL: `127.0.0.1:${accounts.port}`,
      WEBHOOKS_GRPC_URL: `127.0.0.1:${webhooks.port}`,
      PUBLISHING_GRPC_URL: `127.0.0.1:${publishing.port}`,
      ...extra,
    };
    const gateway = await startGateway(
      parseConfig(gatewayConfigSchema(gatewayEnv), gatewayEnv),
      createLogger('gateway', { destination, level: common.LOG_LEVEL }),
    );
    gateways.push(gateway);
    return gateway;
  };
  const gateway = await launchGateway();
  return {
    databaseUrl,
    prefix,
    logs,
    identity,
    accounts,
    webhooks,
    publishing,
    mediaDir,
    sandbox,
    gateway,
    startGateway: launchGateway,
    startPublishingWorker: () => launchPublishing({ PUBLISHING_ROLE: 'worker' }),
    async sandboxControl<T>(method: string, path: string, body?: unknown) {
      const response = await fetch(`${sandbox.url}${path}`, {
        method,
        headers: body === undefined ? {} : { 'content-type': 'application/json' },
        body: body === undefined ? undefined : JSON.stringify(body),
      });
      return (await response.json()) as T;
    },
    async createPartner(slug = uniquePrefix('p')) {
      const { createPartner } = await import('@svc/identity/admin');
      const result = await createPartner(identity.prisma, slug);
      return { partnerId: result.partner.id, key: result.key };
    },
    async stop() {
      for (const g of gateways) await g.stop();
      for (const p of publishings) await p.stop();
      await webhooks.stop();
      await accounts.stop();
      await rm(mediaDir, { recursive: true, force: true });
      await sandbox.close();
      await identity.stop();
    },
  };
}

export { api } from './http.ts';
