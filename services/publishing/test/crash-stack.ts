import { type ChildProcess, spawn } from 'node:child_process';
import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { createInterface } from 'node:readline';
import { type Bus, connectBus, STREAMS, type StreamKey } from '@svc/bus';
import { parseConfig } from '@svc/config';
import { type RunningSandbox, sandboxConfig, startSandbox } from '@svc/graph-sandbox';
import { createLogger } from '@svc/logging';
import { createTestDatabase, uniquePrefix } from '@svc/testing';
import pg from 'pg';
import sharp from 'sharp';
// The other services are this repository's own code, started in this process exactly as the
// gateway's test harness starts them (relative imports: they are not dependencies of publishing).
import { accountsConfigSchema } from '../../accounts/src/config.ts';
import { startAccounts } from '../../accounts/src/service.ts';
import { gatewayConfigSchema } from '../../gateway/src/config.ts';
import { startGateway } from '../../gateway/src/service.ts';
import { connectThroughLink, createUser } from '../../gateway/test/connect-helpers.ts';
import { api, freePort } from '../../gateway/test/http.ts';
import { createPartner } from '../../identity/src/admin/partners.ts';
import { identityConfigSchema } from '../../identity/src/config.ts';
import { startIdentity } from '../../identity/src/service.ts';

/**
 * A real stack where only the publishing service runs as its own process (its real entry point,
 * `src/main.ts`), so a test can `kill -9` it and start it again on the same gRPC port. Identity,
 * accounts, the graph-sandbox and the gateway run in this process, as in the gateway's harness;
 * the gateway's PUBLISHING_GRPC_URL is the child's fixed port.
 */
const ROOT = path.resolve(import.meta.dirname, '../../..');

interface PublishingChild {
  child: ChildProcess;
  /** Every JSON log line the child wrote, in order. */
  logs: Record<string, unknown>[];
  exited: Promise<void>;
}

export interface CrashStack {
  sandbox: RunningSandbox;
  gatewayUrl: string;
  /** A pool on this stack's database, `search_path=publishing`. */
  db: pg.Pool;
  bus: Bus;
  prefix: string;
  /** The publishing child running now (replaced by `startPublishing`). */
  publishing: PublishingChild | undefined;
  startPublishing(): Promise<PublishingChild>;
  /** `kill -9` (or SIGTERM) the running child and wait for it to be gone. */
  stopPublishing(signal: 'SIGKILL' | 'SIGTERM'): Promise<void>;
  sandboxControl<T = Record<string, unknown>>(method: string, path: string, body?: unknown): Promise<T>;
  /** The gateway as the partner (JSON in, JSON out). */
  call: ReturnType<typeof api>;
  /** A workspace with an Instagram account connected through the hosted flow, and a JPEG uploaded. */
  instagramWorkspace(): Promise<{
    workspace: string;
    igAccount: string;
    igPlatformId: string;
    media: string;
  }>;
  stop(): Promise<void>;
}

export async function startCrashStack(options: { containerProcessingMs: number }): Promise<CrashStack> {
  const databaseUrl = await createTestDatabase();
  const prefix = uniquePrefix('pubcrash');
  const quiet = createLogger('crash-test', { level: 'silent' });
  const common = {
    APP_ENV: 'development',
    DATABASE_URL: databaseUrl,
    REDIS_PREFIX: `${prefix}:`,
    NATS_PREFIX: prefix,
    LOG_LEVEL: 'warn',
  };
  const identityEnv = { ...common, IDENTITY_GRPC_ADDRESS: '127.0.0.1:0', OPS_PORT: '0' };
  const identity = await startIdentity(parseConfig(identityConfigSchema(identityEnv), identityEnv), quiet);
  const gatewayPort = await freePort();
  const publishingPort = await freePort();
  const gatewayUrl = `http://127.0.0.1:${gatewayPort}`;
  const sandbox = await startSandbox(
    sandboxConfig({
      port: 0,
      webhookUrl: `${gatewayUrl}/webhooks/meta`,
      deauthorizeUrl: `${gatewayUrl}/webhooks/meta/deauthorize`,
      containerProcessingMs: options.containerProcessingMs,
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
  const accounts = await startAccounts(parseConfig(accountsConfigSchema(accountsEnv), accountsEnv), quiet);
  const mediaDir = await mkdtemp(path.join(tmpdir(), 'svc-media-crash-'));
  const publishingEnv = {
    ...common,
    LOG_LEVEL: 'info',
    PUBLISHING_GRPC_ADDRESS: `127.0.0.1:${publishingPort}`,
    OPS_PORT: '0',
    IDENTITY_GRPC_URL: `127.0.0.1:${identity.port}`,
    ACCOUNTS_GRPC_URL: `127.0.0.1:${accounts.port}`,
    GRAPH_API_BASE_URL: sandbox.url,
    GRAPH_API_RETRY_BASE_MS: '10',
    PUBLIC_BASE_URL: gatewayUrl,
    MEDIA_DIR: mediaDir,
  };
  const gatewayEnv = {
    ...common,
    PORT: String(gatewayPort),
    UNAUTHENTICATED_LIMIT_PER_MINUTE: '100000',
    IDENTITY_GRPC_URL: `127.0.0.1:${identity.port}`,
    ACCOUNTS_GRPC_URL: `127.0.0.1:${accounts.port}`,
    // Webhooks are not part of these tests; nothing listens there and nothing calls it.
    WEBHOOKS_GRPC_URL: `127.0.0.1:${await freePort()}`,
    PUBLISHING_GRPC_URL: `127.0.0.1:${publishingPort}`,
  };
  const gateway = await startGateway(parseConfig(gatewayConfigSchema(gatewayEnv), gatewayEnv), quiet);
  const db = new pg.Pool({ connectionString: databaseUrl, max: 2, options: '-c search_path=publishing' });
  const bus = await connectBus({ url: 'nats://127.0.0.1:4222', prefix, name: 'crash-test', logger: quiet });
  const { key } = await createPartner(identity.prisma, uniquePrefix('crash-'));
  const call = api(gatewayUrl, key);
  const sandboxControl = async <T>(method: string, route: string, body?: unknown) => {
    const response = await fetch(`${sandbox.url}${route}`, {
      method,
      headers: body === undefined ? {} : { 'content-type': 'application/json' },
      body: body === undefined ? undefined : JSON.stringify(body),
    });
    return (await response.json()) as T;
  };

  const stack: CrashStack = {
    sandbox,
    gatewayUrl,
    db,
    bus,
    prefix,
    publishing: undefined,
    async startPublishing() {
      stack.publishing = await spawnPublishing(publishingEnv);
      return stack.publishing;
    },
    async stopPublishing(signal) {
      const running = stack.publishing;
      if (!running) return;
      running.child.kill(signal);
      await running.exited;
      stack.publishing = undefined;
    },
    sandboxControl,
    call,
    async instagramWorkspace() {
      const workspace = (await call('POST', '/v1/workspaces', { name: 'Crash' })).body.id as string;
      const user = await createUser({ sandboxControl }, [
        { name: 'Acme Bakery', instagram: { username: 'acme' } },
      ]);
      const link = (await call('POST', `/v1/workspaces/${workspace}/connect-links`, {})).body;
      await connectThroughLink({ sandbox }, link.url as string, 'page_network', {
        userId: user.user.id,
        decision: 'approve',
      });
      const accounts = (await call('GET', `/v1/workspaces/${workspace}/accounts`)).body.data as {
        id: string;
        network: string;
        platform_id: string;
      }[];
      const ig = accounts.find((a) => a.network === 'photo_network');
      if (!ig) throw new Error(`no Instagram account connected: ${JSON.stringify(accounts)}`);
      return { workspace, igAccount: ig.id, igPlatformId: ig.platform_id, media: await upload(workspace) };
    },
    async stop() {
      await stack.stopPublishing('SIGKILL');
      for (const key of Object.keys(STREAMS) as StreamKey[])
        await bus.jsm.streams.delete(bus.subjects.streamName(key)).catch(() => {});
      await bus.close();
      await db.end();
      await gateway.stop();
      await accounts.stop();
      await sandbox.close();
      await identity.stop();
      await rm(mediaDir, { recursive: true, force: true });
    },
  };

  async function upload(workspace: string): Promise<string> {
    const bytes = await sharp({
      create: { width: 1080, height: 1080, channels: 3, background: { r: 200, g: 120, b: 40 } },
    })
      .jpeg()
      .toBuffer();
    const form = new FormData();
    form.append('workspace', workspace);
    form.append('file', new Blob([new Uint8Array(bytes)]), 'photo.jpg');
    const response = await fetch(`${gatewayUrl}/v1/media`, {
      method: 'POST',
      headers: { authorization: `Bearer ${key}` },
      body: form,
    });
    const body = (await response.json()) as { id: string };
    if (response.status !== 201) throw new Error(`upload: ${response.status} ${JSON.stringify(body)}`);
    return body.id;
  }

  return stack;
}

/** Runs the real publishing entry point as its own process and waits for its gRPC server. */
async function spawnPublishing(env: Record<string, string>): Promise<PublishingChild> {
  const child = spawn(
    process.execPath,
    ['--import', 'tsx', path.join(ROOT, 'services/publishing/src/main.ts')],
    { cwd: ROOT, env: { ...process.env, ...env }, stdio: ['ignore', 'pipe', 'inherit'] },
  );
  const logs: Record<string, unknown>[] = [];
  const exited = new Promise<void>((resolve) => child.once('exit', () => resolve()));
  const lines = createInterface({ input: child.stdout as NodeJS.ReadableStream });
  await new Promise<void>((resolve, reject) => {
    const timer = setTimeout(() => reject(new Error('the publishing service did not start')), 30_000);
    void exited.then(() => reject(new Error(`the publishing service exited (${child.exitCode})`)));
    lines.on('line', (line) => {
      let entry: Record<string, unknown>;
      try {
        entry = JSON.parse(line) as Record<string, unknown>;
      } catch {
        return;
      }
      logs.push(entry);
      if (entry.msg === 'publishing gRPC server listening') {
        clearTimeout(timer);
        resolve();
      }
    });
  });
  return { child, logs, exited };
}
