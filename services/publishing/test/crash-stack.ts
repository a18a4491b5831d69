import type { Bus } from '@svc/bus';
import { connectBus } from '@svc/bus';
import type { RunningSandbox } from '@svc/graph-sandbox';
import { createLogger } from '@svc/logging';
import { api, connectThroughLink, createUser, uniquePrefix, uploadFile } from '@svc/testing';
import { FAST_GRAPH_RETRIES } from '@svc/testing/stack';
import { type SandboxControl, type ServiceChild, type System, startSystem } from '@svc/testing/system';
import pg from 'pg';
import sharp from 'sharp';

/**
 * A real stack where only the publishing service runs as its own process (its real entry point,
 * `src/main.ts`), so a test can `kill -9` it and start it again on the same gRPC port. Identity,
 * accounts, the graph-sandbox and the gateway run in this process; the gateway's
 * PUBLISHING_GRPC_URL is the child's fixed port.
 */
type PublishingChild = ServiceChild;

export interface CrashStack {
  sandbox: RunningSandbox;
  gatewayUrl: string;
  /** A pool on this stack's database, `search_path=publishing`. */
  db: pg.Pool;
  bus: Bus;
  prefix: string;
  /** The publishing child running now (replaced by `startPublishing`). */
  publishing: PublishingChild | undefined;
  /** Starts the publishing child again once it is gone; the running one while it runs. */
  startPublishing(): Promise<PublishingChild>;
  /** `kill -9` (or SIGTERM) the running child and wait for it to be gone. */
  stopPublishing(signal: 'SIGKILL' | 'SIGTERM'): Promise<void>;
  sandboxControl: SandboxControl;
  /** The gateway as the partner (JSON in, JSON out). */
  call: ReturnType<typeof api>;
  /** Uploads a file to the workspace's media library through the gateway; answers the media id. */
  uploadFile(workspace: string, bytes: Uint8Array, filename: string): Promise<string>;
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
  const system = await startSystem({
    // Webhooks are not part of these tests; nothing listens at its address and nothing calls it.
    services: ['identity', 'accounts', 'publishing', 'gateway'],
    run: { publishing: 'source' },
    prefix: uniquePrefix('pubcrash'),
    env: { LOG_LEVEL: 'silent', UNAUTHENTICATED_LIMIT_PER_MINUTE: '100000' },
    // The child logs at info: tests look for its "post settled" and "adopted" lines.
    serviceEnv: { accounts: FAST_GRAPH_RETRIES, publishing: { ...FAST_GRAPH_RETRIES, LOG_LEVEL: 'info' } },
    sandbox: { containerProcessingMs: options.containerProcessingMs },
  });
  const { gatewayUrl, prefix } = system;
  const db = new pg.Pool({
    connectionString: system.databaseUrl,
    max: 2,
    options: '-c search_path=publishing',
  });
  const quiet = createLogger('crash-test', { level: 'silent' });
  const bus = await connectBus({ url: 'nats://127.0.0.1:4222', prefix, name: 'crash-test', logger: quiet });
  const { key } = await system.createPartner(uniquePrefix('crash-'));
  let last = system.child('publishing');

  const stack: CrashStack = {
    sandbox: system.sandbox as RunningSandbox,
    gatewayUrl,
    db,
    bus,
    prefix,
    publishing: last,
    async startPublishing() {
      stack.publishing ??= last = await last.restart();
      return stack.publishing;
    },
    async stopPublishing(signal) {
      await stack.publishing?.stop(signal);
      stack.publishing = undefined;
    },
    sandboxControl: system.sandboxControl,
    call: api(gatewayUrl, key),
    uploadFile: (workspace, bytes, filename) => uploadFile(gatewayUrl, key, workspace, bytes, filename),
    instagramWorkspace: () => instagramWorkspace(system, key),
    async stop() {
      await stack.stopPublishing('SIGKILL');
      await bus.close();
      await db.end();
      await system.stop();
    },
  };
  return stack;
}

/** A workspace with an Instagram account connected through the hosted flow, and a JPEG uploaded. */
async function instagramWorkspace(system: System, key: string) {
  const call = api(system.gatewayUrl, key);
  const workspace = (await call('POST', '/v1/workspaces', { name: 'Crash' })).body.id as string;
  const user = await createUser(system, [{ name: 'Acme Bakery', instagram: { username: 'acme' } }]);
  const link = (await call('POST', `/v1/workspaces/${workspace}/connect-links`, {})).body;
  await connectThroughLink(
    { sandbox: { url: system.addresses.sandboxUrl } },
    link.url as string,
    'page_network',
    {
      userId: user.user.id,
      decision: 'approve',
    },
  );
  const accounts = (await call('GET', `/v1/workspaces/${workspace}/accounts`)).body.data as {
    id: string;
    network: string;
    platform_id: string;
  }[];
  const ig = accounts.find((a) => a.network === 'photo_network');
  if (!ig) throw new Error(`no Instagram account connected: ${JSON.stringify(accounts)}`);
  const bytes = await sharp({
    create: { width: 1080, height: 1080, channels: 3, background: { r: 200, g: 120, b: 40 } },
  })
    .jpeg()
    .toBuffer();
  const media = await uploadFile(system.gatewayUrl, key, workspace, bytes, 'photo.jpg');
  return { workspace, igAccount: ig.id, igPlatformId: ig.platform_id, media };
}
