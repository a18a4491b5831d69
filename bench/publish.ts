// `pnpm bench:publish`: the publish pipeline end to end (issue 6, Speed). Every service runs in its
// own process from its production bundle (`turbo run build`, as `pnpm start` builds them) —
// identity, accounts, webhooks, publishing as two processes (PUBLISHING_ROLE api and worker), the
// gateway and the graph-sandbox (zero container processing delay) — on a fresh database (cloned
// from a migrated template kept between runs, see createDatabase), Redis prefix and NATS prefix of
// this run. This runner only drives load and measures:
//   1. throughput: 2,000 posts with two targets each and a JPEG of their own (a Facebook Page and its linked Instagram
//      account, spread over 60 workspaces so no account nears the 100-per-24 h Instagram limit),
//      created with `POST /v1/posts` from 16 clients at once, through gateway → publishing gRPC →
//      outbox → JetStream work queue → workers → sandbox over HTTP → settlement. Completion is the
//      `post.*` event of each post on NATS. Reports targets published per second end to end and the
//      POST latency at that saturation (p50/p99: with 16 clients each waiting for its answer, that
//      latency is 16 / the rate of creation, so it says how fast posts are created, not how fast
//      one is); beside it, an authenticated `GET /v1/workspaces/:id` probe (20 per second at most)
//      under the same load as the latency baseline, the CPU each process used, Postgres
//      transactions per target and what the service's pooled connections were doing.
//   1b. POST latency under the target load: posts sent at a fixed rate, 75 a second (150 targets a
//      second, the throughput target), open loop: each is sent when it is due, whatever the answers
//      before it, and its latency counts from then. The pipeline publishes them meanwhile; reports
//      the POST p50/p99 (the figure the target is judged on), the rate published and post →
//      settled, which show whether the pipeline kept up.
//   2. the sandbox's own ceiling: the Graph calls of the same targets (container create, status,
//      media_publish, permalink; photo post + permalink) sent directly with the product's Graph
//      client, as many in flight as one publishing replica runs (16), image served by a bare server.
//   3. POST alone: one post at a time with nothing else running, and the same create sent straight
//      to publishing over gRPC (what the gateway adds).
//   4. `wait=true`: one post at a time, each paired with the same two call chains sent directly
//      (in parallel, as the two workers would); overhead = wait=true latency − the sandbox's time.
//   5. the image download the sandbox makes per target: signed gateway URL vs a bare server.
// Then where a target's time goes, step by step, from publishing's own records. Prints the figures,
// the ratios against the baselines, and PASS/FAIL against the targets; exits 1 only when the run
// itself went wrong (refused POSTs, posts not published, a duplicate publish).
//
// Environment: BENCH_POSTS (default 2000), BENCH_WORKSPACES (60), BENCH_CONCURRENCY (16),
// BENCH_SUSTAINED_SECONDS (20), BENCH_WAIT_POSTS (150), BENCH_CEILING_POSTS (150),
// BENCH_ALONE_POSTS (60), BENCH_CPU_PROF=1
// writes V8 CPU profiles of every service into $TMPDIR/bench-publish-profiles-<run>/<service>/,
// BENCH_WORKER_NICE (6) is the publishing worker's nice level: as deployed (docker-compose.yml), the
// workers weigh a quarter of a request-serving process on the CPU (cpu_shares 256 of 1024; CFS
// weight 272 of 1024 at nice 6). BENCH_WORKER_NICE=0 runs them at the same priority.
import { type ChildProcess, spawn, spawnSync } from 'node:child_process';
import { createHash, randomBytes } from 'node:crypto';
import { existsSync, readdirSync, readFileSync, readlinkSync } from 'node:fs';
import { mkdir, mkdtemp, rm } from 'node:fs/promises';
import { createServer as createHttpServer } from 'node:http';
import { setPriority, tmpdir } from 'node:os';
import path from 'node:path';
import { Redis } from 'ioredis';
import pg from 'pg';
import { AuthCache } from '../packages/auth-cache/src/index.ts';
import { connectBus, STREAMS, type StreamKey } from '../packages/bus/src/index.ts';
import { AccountsService, createClient, PublishingService } from '../packages/contracts/src/index.ts';
import {
  GraphClient,
  graphClientConfigFromEnv,
  parseGraphClientEnv,
} from '../packages/graph-client/src/index.ts';
import { createLogger } from '../packages/logging/src/index.ts';
import { ensureDatabase, migrateAll } from '../scripts/migrate.ts';
// sharp and undici are the services' own dependencies; the root has no copy, so the bench borrows theirs.
import sharp from '../services/gateway/node_modules/sharp/dist/index.mjs';
import { connectThroughLink, createUser } from '../services/gateway/test/connect-helpers.ts';
import { freePort } from '../services/gateway/test/http.ts';
import { createPartner, setPartnerLimit } from '../services/identity/src/admin/partners.ts';
import { openDatabase as openIdentityDatabase } from '../services/identity/src/db.ts';
import { mediaUrl } from '../services/publishing/src/media/signed-url.ts';
import { Agent, request } from '../services/webhooks/node_modules/undici/index.js';
import { envVar, ROOT } from './child.ts';

const POSTS = Number(envVar('BENCH_POSTS', '2000'));
const WORKSPACES = Number(envVar('BENCH_WORKSPACES', '60'));
const CONCURRENCY = Number(envVar('BENCH_CONCURRENCY', '16'));
const WAIT_POSTS = Number(envVar('BENCH_WAIT_POSTS', '150'));
const CEILING_POSTS = Number(envVar('BENCH_CEILING_POSTS', '150'));
const ALONE_POSTS = Number(envVar('BENCH_ALONE_POSTS', '60'));
const SUSTAINED_SECONDS = Number(envVar('BENCH_SUSTAINED_SECONDS', '20'));
const CPU_PROFILE = envVar('BENCH_CPU_PROF', '') === '1';
const WORKER_NICE = Number(envVar('BENCH_WORKER_NICE', '6'));
/** The publishing service's jobs in flight per replica (services/publishing/src/workers.ts). */
const WORKER_CONCURRENCY = 16;
const SETTLE_TIMEOUT_MS = 120_000;
const PROBE_INTERVAL_MS = 50;
const REDIS_URL = envVar('REDIS_URL', 'redis://127.0.0.1:6379');
const NATS_URL = envVar('NATS_URL', 'nats://127.0.0.1:4222');
const SERVER_URL = envVar('BENCH_DATABASE_SERVER', 'postgresql://postgres@127.0.0.1:5432/postgres');
// Development defaults the services share (their config schemas): the vault credential of
// publishing, and the Meta app the sandbox and the product both know.
const VAULT_CREDENTIAL = 'development-vault-publishing';
const MEDIA_URL_SECRET = 'development-media-url-secret';
const META_APP = { appId: '465000000000001', appSecret: 'sandbox-app-secret-0123456789abcdef' };
const TARGETS = { throughput: 150, postP99: 50, waitOverheadP50: 30 };

const run = randomBytes(4).toString('hex');
const TEMPLATE_PREFIX = 'bench_publish_template_';
const databaseName = `bench_publish_${run}`;
const urlOf = (database: string) => {
  const url = new URL(SERVER_URL);
  url.pathname = `/${database}`;
  return url.toString();
};
const databaseUrl = urlOf(databaseName);
const redisPrefix = `benchpub${run}:`;
const natsPrefix = `benchpub${run}`;
const logger = createLogger('bench', { level: 'warn', destination: process.stderr });

const fmt = (ms: number) => ms.toFixed(1);
const benchStart = performance.now();
const say = (line: string) =>
  process.stderr.write(`[${((performance.now() - benchStart) / 1000).toFixed(0).padStart(3)} s] ${line}\n`);
const sleep = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms));

// ---------------------------------------------------------------------------------------------
// The services, each in its own process.

interface Service {
  name: string;
  child: ChildProcess;
  exited: Promise<void>;
}

const services: Service[] = [];
let mediaDir: string | undefined;
let databaseCreated = false;

function spawnService(
  name: string,
  entry: string,
  env: Record<string, string>,
  profileDir?: string,
): Service {
  // One folder per service: tsx's loader thread writes a profile of its own beside the main thread's.
  const flags = profileDir ? ['--cpu-prof', `--cpu-prof-dir=${path.join(profileDir, name)}`] : [];
  // Service logs (warn and above) go to stderr: stdout carries only the results.
  const child = spawn(process.execPath, ['--enable-source-maps', ...flags, path.join(ROOT, entry)], {
    cwd: ROOT,
    env: { ...process.env, ...env },
    stdio: ['ignore', 2, 2],
  });
  const exited = new Promise<void>((resolve) => child.once('exit', () => resolve()));
  const service = { name, child, exited };
  services.push(service);
  return service;
}

/** The services' production bundles (`dist/main.js`), built as `pnpm start` builds them. */
function buildServices(): void {
  say('building the services (turbo run build) …');
  const build = spawnSync(
    path.join(ROOT, 'node_modules/.bin/turbo'),
    ['run', 'build', '--output-logs=errors-only'],
    {
      cwd: ROOT,
      stdio: ['ignore', 2, 2],
    },
  );
  if (build.status !== 0) throw new Error(`turbo run build failed (exit ${build.status})`);
}

async function stopService(service: Service): Promise<void> {
  const { child } = service;
  if (child.exitCode !== null || child.signalCode !== null) return;
  child.kill('SIGTERM');
  const timer = setTimeout(() => child.kill('SIGKILL'), 15_000);
  await service.exited;
  clearTimeout(timer);
}

async function waitReady(service: Service, url: string, timeoutMs = 90_000): Promise<void> {
  const deadline = Date.now() + timeoutMs;
  let exited = false;
  void service.exited.then(() => {
    exited = true;
  });
  for (;;) {
    if (exited) throw new Error(`${service.name} exited before it was ready`);
    try {
      const response = await fetch(url, { signal: AbortSignal.timeout(2_000) });
      await response.body?.cancel();
      if (response.ok) return;
    } catch {
      // not listening yet
    }
    if (Date.now() > deadline) throw new Error(`${service.name} was not ready within ${timeoutMs} ms`);
    await sleep(200);
  }
}

async function startSystem(profileDir: string | undefined) {
  const [identityGrpc, accountsGrpc, publishingGrpc, webhooksGrpc] = [
    await freePort(),
    await freePort(),
    await freePort(),
    await freePort(),
  ];
  const [
    identityOps,
    accountsOps,
    publishingOps,
    publishingWorkerOps,
    webhooksOps,
    sandboxPort,
    gatewayPort,
  ] = [
    await freePort(),
    await freePort(),
    await freePort(),
    await freePort(),
    await freePort(),
    await freePort(),
    await freePort(),
  ];
  const gatewayUrl = `http://127.0.0.1:${gatewayPort}`;
  const sandboxUrl = `http://127.0.0.1:${sandboxPort}`;
  const media = await mkdtemp(path.join(tmpdir(), 'bench-publish-media-'));
  mediaDir = media;
  const common = {
    APP_ENV: 'development',
    LOG_LEVEL: 'warn',
    DATABASE_URL: databaseUrl,
    REDIS_URL,
    NATS_URL,
    REDIS_PREFIX: redisPrefix,
    NATS_PREFIX: natsPrefix,
  };
  const identityUrl = `127.0.0.1:${identityGrpc}`;
  const accountsUrl = `127.0.0.1:${accountsGrpc}`;
  const plan: { name: string; entry: string; env: Record<string, string>; ready: string }[] = [
    {
      name: 'identity',
      entry: 'services/identity/dist/main.js',
      env: { ...common, IDENTITY_GRPC_ADDRESS: identityUrl, OPS_PORT: String(identityOps) },
      ready: `http://127.0.0.1:${identityOps}/readyz`,
    },
    {
      name: 'graph-sandbox',
      entry: 'services/graph-sandbox/dist/main.js',
      env: {
        APP_ENV: 'development',
        LOG_LEVEL: 'warn',
        GRAPH_SANDBOX_PORT: String(sandboxPort),
        SANDBOX_WEBHOOK_URL: `${gatewayUrl}/webhooks/meta`,
        SANDBOX_DEAUTHORIZE_URL: `${gatewayUrl}/webhooks/meta/deauthorize`,
        SANDBOX_CONTAINER_PROCESSING_MS: '0',
        SANDBOX_WEBHOOK_RETRIES: '0',
      },
      ready: `${sandboxUrl}/__sandbox/published`,
    },
    {
      name: 'accounts',
      entry: 'services/accounts/dist/main.js',
      env: {
        ...common,
        ACCOUNTS_GRPC_ADDRESS: accountsUrl,
        OPS_PORT: String(accountsOps),
        IDENTITY_GRPC_URL: identityUrl,
        GRAPH_API_BASE_URL: sandboxUrl,
        FACEBOOK_DIALOG_URL: sandboxUrl,
        PUBLIC_BASE_URL: gatewayUrl,
      },
      ready: `http://127.0.0.1:${accountsOps}/readyz`,
    },
    {
      name: 'webhooks',
      entry: 'services/webhooks/dist/main.js',
      env: { ...common, WEBHOOKS_GRPC_ADDRESS: `127.0.0.1:${webhooksGrpc}`, OPS_PORT: String(webhooksOps) },
      ready: `http://127.0.0.1:${webhooksOps}/readyz`,
    },
    // Publishing as two processes, its API and its workers (PUBLISHING_ROLE), as it is deployed
    // when the API must stay responsive however busy the workers are.
    ...(['api', 'worker'] as const).map((role) => ({
      name: role === 'api' ? 'publishing' : 'publishing-worker',
      entry: 'services/publishing/dist/main.js',
      env: {
        ...common,
        PUBLISHING_ROLE: role,
        PUBLISHING_GRPC_ADDRESS: `127.0.0.1:${publishingGrpc}`,
        OPS_PORT: String(role === 'api' ? publishingOps : publishingWorkerOps),
        IDENTITY_GRPC_URL: identityUrl,
        ACCOUNTS_GRPC_URL: accountsUrl,
        GRAPH_API_BASE_URL: sandboxUrl,
        PUBLIC_BASE_URL: gatewayUrl,
        MEDIA_DIR: media,
      },
      ready: `http://127.0.0.1:${role === 'api' ? publishingOps : publishingWorkerOps}/readyz`,
    })),
    {
      name: 'gateway',
      entry: 'services/gateway/dist/main.js',
      env: {
        ...common,
        PORT: String(gatewayPort),
        IDENTITY_GRPC_URL: identityUrl,
        ACCOUNTS_GRPC_URL: accountsUrl,
        WEBHOOKS_GRPC_URL: `127.0.0.1:${webhooksGrpc}`,
        PUBLISHING_GRPC_URL: `127.0.0.1:${publishingGrpc}`,
        UNAUTHENTICATED_LIMIT_PER_MINUTE: '1000000',
      },
      ready: `${gatewayUrl}/readyz`,
    },
  ];
  buildServices();
  const started = plan.map((p) => ({ ...p, service: spawnService(p.name, p.entry, p.env, profileDir) }));
  const worker = started.find((p) => p.name === 'publishing-worker')?.service.child.pid;
  if (worker && WORKER_NICE) setPriority(worker, WORKER_NICE);
  for (const { service, ready } of started) await waitReady(service, ready);
  return { gatewayUrl, sandboxUrl, accountsUrl, publishingUrl: `127.0.0.1:${publishingGrpc}` };
}

/**
 * The run's database, cloned from a migrated template. Applying every service's migrations with
 * the Prisma CLI (`pnpm migrate`, scripts/migrate.ts) takes most of a minute here, so the migrated
 * result is kept as `bench_publish_template_<hash of the migrations>` on the local server and reused
 * until a migration changes (templates of older migrations are dropped then).
 */
async function createDatabase(): Promise<void> {
  const hash = createHash('sha256');
  for (const service of readdirSync(path.join(ROOT, 'services')).sort()) {
    const dir = path.join(ROOT, 'services', service, 'prisma/migrations');
    if (!existsSync(dir)) continue;
    for (const migration of readdirSync(dir).sort()) {
      const file = path.join(dir, migration, 'migration.sql');
      if (existsSync(file)) hash.update(`${service}/${migration}\n`).update(readFileSync(file));
    }
  }
  const template = `${TEMPLATE_PREFIX}${hash.digest('hex').slice(0, 12)}`;
  const admin = new pg.Client({ connectionString: SERVER_URL });
  await admin.connect();
  try {
    const exists = async (name: string) =>
      ((await admin.query('SELECT 1 FROM pg_database WHERE datname = $1', [name])).rowCount ?? 0) > 0;
    if (!(await exists(template))) {
      say(`migrating a new template database ${template} (once per change of the migrations) …`);
      const building = `${TEMPLATE_PREFIX}building_${run}`;
      process.env.DATABASE_URL = urlOf(building);
      await ensureDatabase(urlOf(building));
      const log = console.log;
      console.log = () => {}; // migrateAll reports each service on stdout; stdout carries only results
      try {
        await migrateAll();
      } catch (error) {
        await admin.query(`DROP DATABASE IF EXISTS "${building}" WITH (FORCE)`);
        throw error;
      } finally {
        console.log = log;
      }
      const stale = await admin.query<{ datname: string }>(
        'SELECT datname FROM pg_database WHERE datname LIKE $1 AND datname NOT LIKE $2',
        [`${TEMPLATE_PREFIX}%`, `${TEMPLATE_PREFIX}building_%`],
      );
      for (const { datname } of stale.rows)
        await admin.query(`DROP DATABASE IF EXISTS "${datname}" WITH (FORCE)`).catch(() => {});
      // Another run may have finished the same template meanwhile: then ours is dropped.
      await admin.query(`ALTER DATABASE "${building}" RENAME TO "${template}"`).catch(async () => {
        await admin.query(`DROP DATABASE IF EXISTS "${building}" WITH (FORCE)`);
      });
    }
    await admin.query(`CREATE DATABASE "${databaseName}" TEMPLATE "${template}"`);
    databaseCreated = true;
  } finally {
    await admin.end();
  }
}

// ---------------------------------------------------------------------------------------------
// Fixtures: a partner with a raised limit, workspaces each with a Page + Instagram account and a JPEG.

async function partnerKey(): Promise<{ key: string; partnerId: string }> {
  const { pool, prisma } = openIdentityDatabase(databaseUrl);
  const redis = new Redis(REDIS_URL, { maxRetriesPerRequest: 1 });
  try {
    const slug = `bench-${run}`;
    const { key, partner } = await createPartner(prisma, slug, 'Publish benchmark partner');
    // The default 300 requests a minute would throttle the run; the highest accepted limit.
    await setPartnerLimit(prisma, new AuthCache(redis, redisPrefix), slug, 1_000_000);
    return { key, partnerId: partner.id };
  } finally {
    redis.disconnect();
    await prisma.$disconnect();
    await pool.end();
  }
}

interface Fixture {
  workspace: string;
  media: string;
  ig: { id: string; platformId: string; token: string };
  page: { id: string; platformId: string; token: string };
}

/** A sandbox user with a Page and its Instagram account, connected through the hosted flow. */
async function connectPageAndInstagram(sandboxUrl: string, linkUrl: string, index: number): Promise<void> {
  const sandboxControl = async <T>(method: string, route: string, body?: unknown): Promise<T> => {
    const response = await fetch(`${sandboxUrl}${route}`, {
      method,
      headers: { 'content-type': 'application/json' },
      body: JSON.stringify(body),
    });
    return (await response.json()) as T;
  };
  const user = await createUser({ sandboxControl }, [
    { name: `Bench Bakery ${index}`, instagram: { username: `bench_bakery_${index}` } },
  ]);
  const finished = await connectThroughLink({ sandbox: { url: sandboxUrl } }, linkUrl, 'page_network', {
    userId: user.user.id,
    decision: 'approve',
  });
  if (finished.status >= 400) throw new Error(`connect callback: ${finished.status}`);
}

async function uploadJpeg(gatewayUrl: string, key: string, workspace: string, jpeg: Buffer): Promise<string> {
  const form = new FormData();
  form.append('workspace', workspace);
  form.append('file', new Blob([new Uint8Array(jpeg)], { type: 'image/jpeg' }), 'photo.jpg');
  const uploaded = await fetch(`${gatewayUrl}/v1/media`, {
    method: 'POST',
    headers: { authorization: `Bearer ${key}` },
    body: form,
  });
  const media = (await uploaded.json()) as { id: string };
  if (uploaded.status !== 201) throw new Error(`upload: ${uploaded.status} ${JSON.stringify(media)}`);
  return media.id;
}

async function createFixtures(gatewayUrl: string, sandboxUrl: string, accountsUrl: string, key: string) {
  const call = async (method: string, route: string, body?: unknown) => {
    const response = await fetch(`${gatewayUrl}${route}`, {
      method,
      headers: {
        authorization: `Bearer ${key}`,
        ...(body === undefined ? {} : { 'content-type': 'application/json' }),
      },
      body: body === undefined ? undefined : JSON.stringify(body),
    });
    const json = (await response.json()) as Record<string, unknown>;
    if (response.status >= 300)
      throw new Error(`${method} ${route}: ${response.status} ${JSON.stringify(json)}`);
    return json;
  };
  const jpeg = await sharp({
    create: { width: 1080, height: 1080, channels: 3, background: { r: 200, g: 120, b: 40 } },
  })
    .jpeg()
    .toBuffer();
  const vault = createClient(AccountsService, accountsUrl, { credential: VAULT_CREDENTIAL });
  const token = async (accountId: string) => {
    const { token, account } = await vault.getAccountToken({ accountId });
    return { token, platformId: account?.platformId ?? '' };
  };

  const one = async (index: number): Promise<Fixture> => {
    const workspace = (await call('POST', '/v1/workspaces', { name: `Bench ${index}` })).id as string;
    const link = await call('POST', `/v1/workspaces/${workspace}/connect-links`, {});
    await connectPageAndInstagram(sandboxUrl, link.url as string, index);
    const accounts = (await call('GET', `/v1/workspaces/${workspace}/accounts`)).data as {
      id: string;
      network: string;
    }[];
    const ig = accounts.find((a) => a.network === 'photo_network');
    const page = accounts.find((a) => a.network === 'page_network');
    if (!ig || !page) throw new Error(`workspace ${workspace}: accounts not connected`);
    return {
      workspace,
      media: await uploadJpeg(gatewayUrl, key, workspace, jpeg),
      ig: { id: ig.id, ...(await token(ig.id)) },
      page: { id: page.id, ...(await token(page.id)) },
    };
  };
  try {
    const fixtures: Fixture[] = [];
    for (let i = 0; i < WORKSPACES; i += 5) {
      const batch = Array.from({ length: Math.min(5, WORKSPACES - i) }, (_, j) => one(i + j));
      fixtures.push(...(await Promise.all(batch)));
    }
    return { fixtures, jpeg };
  } finally {
    vault.close();
  }
}

// ---------------------------------------------------------------------------------------------
// Measuring.

function percentile(values: number[], q: number): number {
  if (values.length === 0) return Number.NaN;
  const sorted = [...values].sort((a, b) => a - b);
  return sorted[Math.min(sorted.length - 1, Math.floor(q * sorted.length))] ?? Number.NaN;
}

/** Runs `count` tasks with at most `limit` in flight. */
async function pool(count: number, limit: number, task: (index: number) => Promise<void>): Promise<void> {
  let next = 0;
  await Promise.all(
    Array.from({ length: Math.min(limit, count) }, async () => {
      while (next < count) await task(next++);
    }),
  );
}

/** CPU time per process (from /proc), to show where the machine's time goes during a phase. */
function cpuSnapshot(): {
  ticks: Map<number, { comm: string; ticks: number }>;
  busy: number;
  total: number;
} {
  const ticks = new Map<number, { comm: string; ticks: number }>();
  for (const entry of readdirSync('/proc')) {
    if (!/^\d+$/.test(entry)) continue;
    try {
      const stat = readFileSync(`/proc/${entry}/stat`, 'utf8');
      const comm = stat.slice(stat.indexOf('(') + 1, stat.lastIndexOf(')'));
      const fields = stat.slice(stat.lastIndexOf(')') + 2).split(' ');
      ticks.set(Number(entry), { comm, ticks: Number(fields[11]) + Number(fields[12]) });
    } catch {
      // the process ended meanwhile
    }
  }
  const cpu = (readFileSync('/proc/stat', 'utf8').split('\n')[0] ?? '').split(/\s+/).slice(1).map(Number);
  const total = cpu.reduce((a, b) => a + (b || 0), 0);
  const idle = (cpu[3] ?? 0) + (cpu[4] ?? 0);
  return { ticks, busy: total - idle, total };
}

function cpuBreakdown(
  before: ReturnType<typeof cpuSnapshot>,
  after: ReturnType<typeof cpuSnapshot>,
  seconds: number,
) {
  const TICKS_PER_S = 100;
  const byName = new Map<string, number>();
  const names = new Map<number, string>(services.map((s) => [s.child.pid ?? -1, s.name]));
  names.set(process.pid, 'bench runner');
  for (const [pid, { comm, ticks }] of after.ticks) {
    const used = ticks - (before.ticks.get(pid)?.ticks ?? 0);
    if (used <= 0) continue;
    const name =
      names.get(pid) ?? (['postgres', 'nats-server', 'redis-server'].includes(comm) ? comm : 'other');
    byName.set(name, (byName.get(name) ?? 0) + used);
  }
  const cores = (after.busy - before.busy) / (after.total - before.total);
  // Busy time no live process accounts for: processes that ended meanwhile (other sessions' test
  // runs on a shared machine, short-lived tools) and the kernel.
  const attributed = [...byName.values()].reduce((a, b) => a + b, 0) / TICKS_PER_S / seconds;
  const unattributed = cores * 2 - attributed;
  if (unattributed > 0.01) byName.set('ended processes/kernel', unattributed * seconds * TICKS_PER_S);
  const parts = [...byName.entries()]
    .sort((a, b) => b[1] - a[1])
    .map(([name, t]) => `${name} ${((t / TICKS_PER_S / seconds) * 100).toFixed(0)}%`);
  const foreign =
    ((byName.get('other') ?? 0) + (byName.get('ended processes/kernel') ?? 0)) / TICKS_PER_S / seconds;
  return { machineBusy: cores, foreign, line: parts.join(', ') };
}

/** Which service owns each Postgres client port (from /proc: the sockets of each service's process). */
function postgresPortOwners(): Map<number, string> {
  const inodeToPort = new Map<string, number>();
  for (const file of ['/proc/net/tcp', '/proc/net/tcp6']) {
    let text = '';
    try {
      text = readFileSync(file, 'utf8');
    } catch {
      continue;
    }
    for (const line of text.split('\n').slice(1)) {
      const cols = line.trim().split(/\s+/);
      const local = cols[1]?.split(':')[1];
      const remote = cols[2]?.split(':')[1];
      if (local && remote && Number.parseInt(remote, 16) === 5432 && cols[9])
        inodeToPort.set(cols[9], Number.parseInt(local, 16));
    }
  }
  const owners = new Map<number, string>();
  for (const service of services) {
    const pid = service.child.pid;
    if (!pid) continue;
    let fds: string[] = [];
    try {
      fds = readdirSync(`/proc/${pid}/fd`);
    } catch {
      continue;
    }
    for (const fd of fds) {
      try {
        const target = readlinkSync(`/proc/${pid}/fd/${fd}`);
        const inode = /^socket:\[(\d+)\]$/.exec(target)?.[1];
        const port = inode ? inodeToPort.get(inode) : undefined;
        if (port) owners.set(port, service.name);
      } catch {
        // closed meanwhile
      }
    }
  }
  return owners;
}

/**
 * Samples pg_stat_activity every 250 ms while a phase runs: per service, how many of its pooled
 * connections are running a statement, sitting idle inside a transaction (the service doing other
 * work — JS, a gRPC call — while holding the transaction), or waiting on a lock.
 */
function sampleDatabase() {
  const client = new pg.Client({ connectionString: SERVER_URL });
  const stats = new Map<string, { open: number; active: number; inTx: number; lock: number }>();
  let samples = 0;
  let owners = new Map<number, string>();
  let stopped = false;
  const done = (async () => {
    await client.connect();
    while (!stopped) {
      const { rows } = await client.query<{
        client_port: number;
        state: string;
        wait_event_type: string | null;
      }>(
        `SELECT client_port, state, wait_event_type FROM pg_stat_activity
          WHERE datname = $1 AND pid <> pg_backend_pid() AND backend_type = 'client backend'`,
        [databaseName],
      );
      if (rows.some((r) => !owners.has(r.client_port))) owners = postgresPortOwners();
      samples++;
      for (const row of rows) {
        const name = owners.get(row.client_port) ?? 'unknown';
        const entry = stats.get(name) ?? { open: 0, active: 0, inTx: 0, lock: 0 };
        entry.open++;
        if (row.state === 'active') entry.active++;
        if (row.state?.startsWith('idle in transaction')) entry.inTx++;
        if (row.wait_event_type === 'Lock') entry.lock++;
        stats.set(name, entry);
      }
      await sleep(250);
    }
    await client.end();
  })();
  return {
    async stop() {
      stopped = true;
      await done;
      const avg = (n: number) => (n / Math.max(1, samples)).toFixed(1);
      return [...stats.entries()]
        .sort((a, b) => b[1].active + b[1].inTx - (a[1].active + a[1].inTx))
        .map(
          ([name, e]) =>
            `${name}: ${avg(e.open)} open, ${avg(e.active)} running a statement, ${avg(e.inTx)} idle in a transaction, ${avg(e.lock)} waiting on a lock`,
        );
    },
  };
}

/**
 * Where a target's time goes, from what the pipeline records (publishing's tables, all stamped
 * by Postgres or the worker): post committed → its job relayed to NATS → the worker sent the
 * publish call (Instagram: after container create + status) → published (publish/photo +
 * permalink answered) → the target settled → the post event relayed. Medians per network.
 */
async function stepBreakdown(captionLike: string): Promise<string[]> {
  const client = new pg.Client({ connectionString: databaseUrl });
  await client.connect();
  try {
    const { rows } = await client.query<{ network: string; step: string; p50: number; p90: number }>(
      `WITH t AS (
         SELECT t.network,
                p.created_at AS created,
                j.published_at AS job_relayed,
                t.publish_sent_at AS sent,
                t.published_at AS published,
                t.updated_at AS settled,
                e.created_at AS event_written,
                e.published_at AS event_relayed
           FROM publishing.posts p
           JOIN publishing.post_targets t ON t.post_id = p.id
           JOIN publishing.outbox j ON j.id = 'job_' || p.id || '_' || t.account_id || '_1'
           LEFT JOIN publishing.outbox e ON e.subject LIKE 'post.%' AND e.payload->'data'->'post'->>'id' = p.id
          WHERE p.caption LIKE $1 AND t.status = 'published')
       SELECT network, step,
              percentile_cont(0.5) WITHIN GROUP (ORDER BY ms) AS p50,
              percentile_cont(0.9) WITHIN GROUP (ORDER BY ms) AS p90
         FROM t, LATERAL (VALUES
           ('1 post committed → job relayed to NATS', extract(epoch FROM job_relayed - created) * 1000),
           ('2 job relayed → publish call sent', extract(epoch FROM sent - job_relayed) * 1000),
           ('3 publish call sent → published', extract(epoch FROM published - sent) * 1000),
           ('4 published → target settled', extract(epoch FROM settled - published) * 1000),
           ('5 post settled → event relayed', extract(epoch FROM event_relayed - event_written) * 1000)
         ) AS s(step, ms)
        GROUP BY network, step ORDER BY network, step`,
      [captionLike],
    );
    return rows.map(
      (r) =>
        `${r.network.padEnd(13)} ${r.step.padEnd(40)} p50 ${fmt(Number(r.p50))} ms, p90 ${fmt(Number(r.p90))} ms`,
    );
  } finally {
    await client.end();
  }
}

/** Postgres transactions committed in this run's database (a standalone statement counts as one). */
async function transactionsCommitted(): Promise<number> {
  const client = new pg.Client({ connectionString: SERVER_URL });
  await client.connect();
  try {
    const { rows } = await client.query<{ n: string }>(
      'SELECT xact_commit AS n FROM pg_stat_database WHERE datname = $1',
      [databaseName],
    );
    return Number(rows[0]?.n ?? 0);
  } finally {
    await client.end();
  }
}

interface Settlement {
  at: number;
  status: string;
  published: number;
  targets: number;
}

/** `post.*` events on NATS (core subscription), recording when each post settled. */
async function watchSettlements() {
  const bus = await connectBus({ url: NATS_URL, prefix: natsPrefix, name: 'bench-watch', logger });
  const settled = new Map<string, Settlement>();
  const waiters: { ids: string[]; resolve: () => void }[] = [];
  const subscription = bus.nc.subscribe(bus.subjects.subject('post.>'), {
    callback: (error, message) => {
      if (error) return;
      const event = message.json<{
        data?: { post?: { id: string; status: string; targets: { status: string }[] } };
      }>();
      const post = event.data?.post;
      if (!post || settled.has(post.id)) return;
      settled.set(post.id, {
        at: performance.now(),
        status: post.status,
        published: post.targets.filter((t) => t.status === 'published').length,
        targets: post.targets.length,
      });
      for (const waiter of waiters) if (waiter.ids.every((id) => settled.has(id))) waiter.resolve();
    },
  });
  return {
    settled,
    async all(ids: string[], timeoutMs: number) {
      if (!ids.every((id) => settled.has(id)))
        await Promise.race([
          new Promise<void>((resolve) => waiters.push({ ids, resolve })),
          sleep(timeoutMs),
        ]);
      const missing = ids.filter((id) => !settled.has(id)).length;
      if (missing > 0)
        throw new Error(`${missing} of ${ids.length} posts did not settle within ${timeoutMs} ms`);
    },
    async close() {
      subscription.unsubscribe();
      await bus.close();
    },
  };
}

function gatewayClient(gatewayUrl: string, key: string, connections = CONCURRENCY + 4) {
  const agent = new Agent({ connections, keepAliveTimeout: 30_000 });
  return {
    async call(method: 'GET' | 'POST', route: string, body?: unknown) {
      const started = performance.now();
      const response = await request(`${gatewayUrl}${route}`, {
        method,
        dispatcher: agent,
        headers: {
          authorization: `Bearer ${key}`,
          ...(body === undefined ? {} : { 'content-type': 'application/json' }),
        },
        body: body === undefined ? undefined : JSON.stringify(body),
      });
      const json = (await response.body.json()) as Record<string, unknown>;
      return { status: response.statusCode, body: json, ms: performance.now() - started };
    },
    close: () => agent.close(),
  };
}

/** The same Graph calls a worker makes for one target, sent directly with the product's client. */
function directCalls(graph: GraphClient, imageUrl: string) {
  return {
    async instagram(account: Fixture['ig'], caption: string) {
      const { id } = await graph.instagram.createImageContainer(account.token, account.platformId, {
        imageUrl,
        caption,
      });
      const status = await graph.instagram.containerStatus(account.token, id);
      if (status.status_code !== 'FINISHED') throw new Error(`container ${id} is ${status.status_code}`);
      const media = await graph.instagram.publish(account.token, account.platformId, id);
      await graph.instagram.permalink(account.token, media.id);
    },
    async page(account: Fixture['page'], caption: string) {
      const photo = await graph.pages.postPhoto(account.token, account.platformId, {
        url: imageUrl,
        caption,
      });
      await graph.pages.permalink(account.token, photo.post_id ?? photo.id);
    },
  };
}

async function serveImage(jpeg: Buffer) {
  const server = createHttpServer((_request, response) =>
    response.writeHead(200, { 'content-type': 'image/jpeg', 'content-length': jpeg.length }).end(jpeg),
  );
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const { port } = server.address() as { port: number };
  return {
    url: `http://127.0.0.1:${port}/photo.jpg`,
    close: () => new Promise<void>((resolve) => server.close(() => resolve())),
  };
}

// ---------------------------------------------------------------------------------------------
// Cleanup.

let cleaning: Promise<void> | undefined;
function cleanup(): Promise<void> {
  cleaning ??= (async () => {
    const step = async (what: string, fn: () => Promise<unknown>) => {
      try {
        await fn();
      } catch (error) {
        say(`cleanup: ${what} failed: ${String(error)}`);
      }
    };
    for (const service of [...services].reverse())
      await step(`stopping ${service.name}`, () => stopService(service));
    await step('deleting Redis keys', async () => {
      const redis = new Redis(REDIS_URL, { maxRetriesPerRequest: 1 });
      try {
        let cursor = '0';
        do {
          const [next, keys] = await redis.scan(cursor, 'MATCH', `${redisPrefix}*`, 'COUNT', 1000);
          cursor = next;
          if (keys.length > 0) await redis.del(...keys);
        } while (cursor !== '0');
      } finally {
        redis.disconnect();
      }
    });
    await step('deleting NATS streams', async () => {
      const bus = await connectBus({ url: NATS_URL, prefix: natsPrefix, name: 'bench-cleanup', logger });
      try {
        for (const key of Object.keys(STREAMS) as StreamKey[])
          await bus.jsm.streams.delete(bus.subjects.streamName(key)).catch(() => {});
      } finally {
        await bus.close();
      }
    });
    if (mediaDir) {
      const dir = mediaDir;
      await step('removing the media folder', () => rm(dir, { recursive: true, force: true }));
    }
    if (databaseCreated)
      await step('dropping the database', async () => {
        const client = new pg.Client({ connectionString: SERVER_URL });
        await client.connect();
        try {
          await client.query(`DROP DATABASE IF EXISTS "${databaseName}" WITH (FORCE)`);
        } finally {
          await client.end();
        }
      });
  })();
  return cleaning;
}

for (const signal of ['SIGINT', 'SIGTERM'] as const) {
  process.once(signal, () => {
    say(`${signal}: cleaning up`);
    void cleanup().finally(() => process.exit(130));
  });
}

// ---------------------------------------------------------------------------------------------
// The run.

const verdict = (ok: boolean) => (ok ? 'PASS' : 'FAIL');

let exitCode = 0;
try {
  say(`database ${databaseName} …`);
  await createDatabase();

  const profileDir = CPU_PROFILE ? path.join(tmpdir(), `bench-publish-profiles-${run}`) : undefined;
  if (profileDir) await mkdir(profileDir, { recursive: true });
  say('starting identity, graph-sandbox, accounts, webhooks, publishing and the gateway …');
  const { gatewayUrl, sandboxUrl, accountsUrl, publishingUrl } = await startSystem(profileDir);
  const { key, partnerId } = await partnerKey();
  say(`creating ${WORKSPACES} workspaces, each with a Page + Instagram account and a JPEG …`);
  const { fixtures, jpeg } = await createFixtures(gatewayUrl, sandboxUrl, accountsUrl, key);
  const fixtureOf = (i: number) => fixtures[i % fixtures.length] as Fixture;
  // Every post has media of its own, uploaded before its phase (not timed), as partners' posts do:
  // what the product keeps of a media (its row, its file) then serves the post's own targets only.
  const mediaOf = new Map<string, string[]>();
  const uploadFor = async (label: string, count: number) => {
    const ids: string[] = [];
    await pool(count, 8, async (i) => {
      ids[i] = await uploadJpeg(gatewayUrl, key, fixtureOf(i).workspace, jpeg);
    });
    mediaOf.set(label, ids);
  };
  const postBody = (i: number, label: string) => {
    const f = fixtureOf(i);
    const media = mediaOf.get(label)?.[i];
    if (!media) throw new Error(`no media uploaded for ${label} #${i}`);
    return {
      workspace: f.workspace,
      caption: `Bench ${label} ${run} #${i}`,
      media: [media],
      targets: [f.ig.id, f.page.id],
    };
  };

  const gateway = gatewayClient(gatewayUrl, key);
  const watcher = await watchSettlements();
  const image = await serveImage(jpeg);
  const graph = new GraphClient(
    graphClientConfigFromEnv(parseGraphClientEnv({ GRAPH_API_BASE_URL: sandboxUrl }), META_APP),
  );
  const direct = directCalls(graph, image.url);

  // Warm-up: one post per workspace through the product, one direct chain pair per workspace.
  say(
    `uploading a JPEG for each post (${WORKSPACES + POSTS + Math.round((TARGETS.throughput / 2) * SUSTAINED_SECONDS) + ALONE_POSTS * 2 + WAIT_POSTS}) …`,
  );
  await uploadFor('warm', WORKSPACES);
  await uploadFor('post', POSTS);
  await uploadFor('sustained', Math.round((TARGETS.throughput / 2) * SUSTAINED_SECONDS));
  await uploadFor('alone', ALONE_POSTS);
  await uploadFor('grpc', ALONE_POSTS);
  await uploadFor('wait', WAIT_POSTS);
  say('warm-up …');
  const warmIds: string[] = [];
  await pool(WORKSPACES, 4, async (i) => {
    const created = await gateway.call('POST', '/v1/posts', postBody(i, 'warm'));
    if (created.status !== 201)
      throw new Error(`warm-up POST: ${created.status} ${JSON.stringify(created.body)}`);
    warmIds.push(created.body.id as string);
  });
  await watcher.all(warmIds, 30_000);
  await pool(WORKSPACES, 4, async (i) => {
    const f = fixtureOf(i);
    await Promise.all([
      direct.instagram(f.ig, `warm direct ${run} ig ${i}`),
      direct.page(f.page, `warm direct ${run} page ${i}`),
    ]);
  });

  // 1. Throughput and POST latency.
  say(`▶ throughput: ${POSTS} posts × 2 targets, ${CONCURRENCY} clients creating …`);
  const postLatencies: number[] = [];
  const probeLatencies: number[] = [];
  const sentAt = new Map<string, number>();
  const ids: string[] = [];
  let failures = 0;
  const cpuBefore = cpuSnapshot();
  const transactionsBefore = await transactionsCommitted();
  const database = sampleDatabase();
  const started = performance.now();
  let creating = true;
  // The probe samples latency, it is not load: one request every PROBE_INTERVAL_MS at most.
  const probe = (async () => {
    let i = 0;
    while (creating) {
      const got = await gateway.call('GET', `/v1/workspaces/${fixtureOf(i++).workspace}`);
      if (got.status === 200) probeLatencies.push(got.ms);
      await sleep(Math.max(0, PROBE_INTERVAL_MS - got.ms));
    }
  })();
  await pool(POSTS, CONCURRENCY, async (i) => {
    const sent = performance.now();
    const created = await gateway.call('POST', '/v1/posts', postBody(i, 'post'));
    if (created.status !== 201) {
      failures++;
      if (failures <= 3) say(`POST /v1/posts answered ${created.status}: ${JSON.stringify(created.body)}`);
      return;
    }
    postLatencies.push(created.ms);
    const id = created.body.id as string;
    sentAt.set(id, sent);
    ids.push(id);
  });
  const createdSeconds = (performance.now() - started) / 1000;
  creating = false;
  await probe;
  await watcher.all(ids, SETTLE_TIMEOUT_MS);
  const settlements = ids.map((id) => watcher.settled.get(id) as Settlement);
  const finished = Math.max(...settlements.map((s) => s.at));
  const e2eSeconds = (finished - started) / 1000;
  const cpu = cpuBreakdown(cpuBefore, cpuSnapshot(), e2eSeconds);
  const connections = await database.stop();
  const targetsPublished = settlements.reduce((n, s) => n + s.published, 0);
  const targetsTotal = settlements.reduce((n, s) => n + s.targets, 0);
  // pg_stat_database is updated when a backend reports (at most every 500 ms or so); let it.
  await sleep(1_500);
  const transactionsPerTarget = ((await transactionsCommitted()) - transactionsBefore) / targetsTotal;
  const notPublished = settlements.filter((s) => s.status !== 'published').length;
  const throughput = targetsPublished / e2eSeconds;
  const postToSettled = ids.map((id) => (watcher.settled.get(id)?.at ?? 0) - (sentAt.get(id) ?? 0));

  // 1b. POST latency under the target load: posts sent at a fixed rate (open loop: each at its
  // time, whatever the answers before it), two targets each, the rate of the throughput target.
  // Latency counts from the moment a POST was due, so a late sender cannot hide a slow answer.
  const rate = TARGETS.throughput / 2;
  const sustainedCount = Math.round(rate * SUSTAINED_SECONDS);
  say(`▶ sustained: ${sustainedCount} posts at ${rate}/s (${TARGETS.throughput} targets/s), open loop …`);
  const sustained = gatewayClient(gatewayUrl, key, 256);
  const sustainedLatencies: number[] = [];
  const sustainedIds: string[] = [];
  const sustainedSent = new Map<string, number>();
  let sustainedFailures = 0;
  const sustainedCpuBefore = cpuSnapshot();
  const sustainedStarted = performance.now();
  await Promise.all(
    Array.from({ length: sustainedCount }, async (_, i) => {
      const due = sustainedStarted + (i * 1000) / rate;
      await sleep(due - performance.now());
      const created = await sustained.call('POST', '/v1/posts', postBody(i, 'sustained'));
      if (created.status !== 201) {
        sustainedFailures++;
        return;
      }
      sustainedLatencies.push(performance.now() - due);
      sustainedSent.set(created.body.id as string, due);
      sustainedIds.push(created.body.id as string);
    }),
  );
  await watcher.all(sustainedIds, SETTLE_TIMEOUT_MS);
  const sustainedSettled = sustainedIds.map((id) => watcher.settled.get(id) as Settlement);
  const sustainedSeconds = (Math.max(...sustainedSettled.map((x) => x.at)) - sustainedStarted) / 1000;
  const sustainedCpu = cpuBreakdown(sustainedCpuBefore, cpuSnapshot(), sustainedSeconds);
  const sustainedThroughput = sustainedSettled.reduce((n, x) => n + x.published, 0) / sustainedSeconds;
  const sustainedToSettled = sustainedIds.map(
    (id) => (watcher.settled.get(id)?.at ?? 0) - (sustainedSent.get(id) ?? 0),
  );
  const sustainedNotPublished = sustainedSettled.filter((x) => x.status !== 'published').length;
  await sustained.close();

  // 2. The sandbox's own ceiling: the same calls directly, as many in flight as one replica's workers.
  say(
    `▶ sandbox ceiling: ${CEILING_POSTS * 2} targets' Graph calls directly, ${WORKER_CONCURRENCY} in flight …`,
  );
  const ceilingStarted = performance.now();
  await pool(CEILING_POSTS * 2, WORKER_CONCURRENCY, async (t) => {
    const post = Math.floor(t / 2);
    const f = fixtureOf(post);
    const caption = `Bench ceiling ${run} #${post}`;
    await (t % 2 === 0 ? direct.instagram(f.ig, caption) : direct.page(f.page, caption));
  });
  const ceiling = (CEILING_POSTS * 2) / ((performance.now() - ceilingStarted) / 1000);

  // 3. POST alone: one post at a time, the next only once the last settled (no load behind it);
  // beside each, the same create sent straight to publishing over gRPC, as the gateway sends it.
  say(`▶ POST alone: ${ALONE_POSTS} posts one at a time, each left to settle before the next …`);
  const aloneLatencies: number[] = [];
  const grpcLatencies: number[] = [];
  const publishing = createClient(PublishingService, publishingUrl);
  for (let i = 0; i < ALONE_POSTS; i++) {
    const created = await gateway.call('POST', '/v1/posts', postBody(i, 'alone'));
    if (created.status !== 201)
      throw new Error(`POST alone: ${created.status} ${JSON.stringify(created.body)}`);
    aloneLatencies.push(created.ms);
    await watcher.all([created.body.id as string], 30_000);
    const body = postBody(i, 'grpc');
    const t0 = performance.now();
    const { post } = await publishing.createPost({
      caller: { partnerId, workspaceId: '' },
      workspaceId: body.workspace,
      caption: body.caption,
      mediaIds: body.media,
      accountIds: body.targets,
      optionsJson: '{}',
      createdBy: 'api',
    });
    grpcLatencies.push(performance.now() - t0);
    await watcher.all([post?.id ?? ''], 30_000);
  }
  publishing.close();

  // 4. wait=true, one at a time, each paired with the sandbox's own time for the same two targets.
  say(`▶ wait=true: ${WAIT_POSTS} posts one at a time, each beside the same calls sent directly …`);
  const waitLatencies: number[] = [];
  const sandboxLatencies: number[] = [];
  const overheads: number[] = [];
  let waitNotPublished = 0;
  for (let i = 0; i < WAIT_POSTS; i++) {
    const f = fixtureOf(i);
    const t0 = performance.now();
    await Promise.all([
      direct.instagram(f.ig, `Bench direct ${run} ig #${i}`),
      direct.page(f.page, `Bench direct ${run} page #${i}`),
    ]);
    const own = performance.now() - t0;
    const waited = await gateway.call('POST', '/v1/posts?wait=true', postBody(i, 'wait'));
    if (waited.status !== 201 || waited.body.status !== 'published') waitNotPublished++;
    sandboxLatencies.push(own);
    waitLatencies.push(waited.ms);
    overheads.push(waited.ms - own);
  }

  // 5. One piece of a target's path alone: the image download the sandbox makes for each target,
  // from the gateway's signed URL (gateway → publishing gRPC → the media volume) vs the bare server.
  const download = async (url: string) => {
    const t0 = performance.now();
    const response = await fetch(url);
    await response.arrayBuffer();
    if (!response.ok) throw new Error(`GET ${url}: ${response.status}`);
    return performance.now() - t0;
  };
  const productDownloads: number[] = [];
  const bareDownloads: number[] = [];
  for (let i = 0; i < 100; i++) {
    const f = fixtureOf(i);
    const signed = mediaUrl(
      { PUBLIC_BASE_URL: gatewayUrl, MEDIA_URL_SECRET, MEDIA_URL_TTL_SECONDS: 3600 },
      f.media,
      'original',
    );
    productDownloads.push(await download(signed));
    bareDownloads.push(await download(image.url));
  }

  await image.close();
  await gateway.close();
  await watcher.close();

  // Nothing posted twice: the sandbox's log holds each (account, caption) once.
  const log2 = (await (await fetch(`${sandboxUrl}/__sandbox/published`)).json()) as {
    data: { account_id: string; caption: string }[];
  };
  const keys = log2.data.map((p) => `${p.account_id} ${p.caption}`);
  const duplicates = keys.length - new Set(keys).size;
  const productEntries = log2.data.filter((p) =>
    / (post|sustained|alone|grpc|wait) /.test(p.caption ?? ''),
  ).length;

  const throughputSteps = await stepBreakdown(`Bench post ${run} %`);
  const waitSteps = await stepBreakdown(`Bench wait ${run} %`);

  const postP50 = percentile(postLatencies, 0.5);
  const postP99 = percentile(postLatencies, 0.99);
  const sustainedP99 = percentile(sustainedLatencies, 0.99);
  const probeP99 = percentile(probeLatencies, 0.99);
  const waitP50 = percentile(waitLatencies, 0.5);
  const ownP50 = percentile(sandboxLatencies, 0.5);
  const overheadP50 = percentile(overheads, 0.5);
  const lines = [
    '',
    `throughput: ${targetsPublished} of ${targetsTotal} targets published in ${e2eSeconds.toFixed(1)} s end to end → ${throughput.toFixed(0)} targets/s  (${POSTS} posts created in ${createdSeconds.toFixed(1)} s = ${(ids.length / createdSeconds).toFixed(0)} posts/s; ${failures} POSTs refused; ${notPublished} posts not 'published')`,
    `  POST → post settled: p50 ${fmt(percentile(postToSettled, 0.5))} ms, p99 ${fmt(percentile(postToSettled, 0.99))} ms, max ${fmt(Math.max(...postToSettled))} ms`,
    `  sandbox ceiling (same Graph calls directly, ${WORKER_CONCURRENCY} in flight): ${ceiling.toFixed(0)} targets/s → product / sandbox ${((throughput / ceiling) * 100).toFixed(1)}%`,
    `  Postgres transactions committed per target (all services; a standalone statement counts as one): ${transactionsPerTarget.toFixed(1)}`,
    `  CPU while it ran (% of one core; ${(cpu.machineBusy * 100).toFixed(0)}% of the machine's 2 cores busy, ${(cpu.foreign * 100).toFixed(0)}% of a core by processes not of this run): ${cpu.line}`,
    `POST /v1/posts at saturation (the throughput phase, ${CONCURRENCY} clients each sending its next POST on the last answer): p50 ${fmt(postP50)} ms, p99 ${fmt(postP99)} ms, max ${fmt(Math.max(...postLatencies))} ms`,
    `POST /v1/posts under the target load (${sustainedCount} posts sent at ${rate}/s for ${SUSTAINED_SECONDS} s, open loop, from when each was due): p50 ${fmt(percentile(sustainedLatencies, 0.5))} ms, p99 ${fmt(sustainedP99)} ms, max ${fmt(Math.max(...sustainedLatencies))} ms; ${sustainedFailures} refused`,
    `  the pipeline meanwhile: ${sustainedThroughput.toFixed(0)} targets/s published (first POST → last settlement); POST → post settled p50 ${fmt(percentile(sustainedToSettled, 0.5))} ms, p99 ${fmt(percentile(sustainedToSettled, 0.99))} ms; ${sustainedNotPublished} posts not 'published'`,
    `  CPU meanwhile (% of one core; ${(sustainedCpu.machineBusy * 100).toFixed(0)}% of the machine's 2 cores busy): ${sustainedCpu.line}`,
    `  the same POST alone (one at a time, nothing else running, ${ALONE_POSTS}): p50 ${fmt(percentile(aloneLatencies, 0.5))} ms, p99 ${fmt(percentile(aloneLatencies, 0.99))} ms; of which publishing's CreatePost over gRPC alone: p50 ${fmt(percentile(grpcLatencies, 0.5))} ms, p99 ${fmt(percentile(grpcLatencies, 0.99))} ms`,
    `  baseline GET /v1/workspaces/:id, same load, one client: p50 ${fmt(percentile(probeLatencies, 0.5))} ms, p99 ${fmt(probeP99)} ms → POST p99 / GET p99 ${(postP99 / probeP99).toFixed(2)}×`,
    `wait=true, one at a time (${WAIT_POSTS}): p50 ${fmt(waitP50)} ms, p99 ${fmt(percentile(waitLatencies, 0.99))} ms; ${waitNotPublished} not 'published' in the answer`,
    `  sandbox's own time for the same 2 targets (direct, in parallel): p50 ${fmt(ownP50)} ms, p99 ${fmt(percentile(sandboxLatencies, 0.99))} ms → wait=true / sandbox ${(waitP50 / ownP50).toFixed(2)}×`,
    `  overhead (wait=true − sandbox, per pair): p50 ${fmt(overheadP50)} ms, p99 ${fmt(percentile(overheads, 0.99))} ms`,
    `  the image download the sandbox makes per target, one at a time: signed gateway URL p50 ${fmt(percentile(productDownloads, 0.5))} ms, p99 ${fmt(percentile(productDownloads, 0.99))} ms; the same bytes from a bare server p50 ${fmt(percentile(bareDownloads, 0.5))} ms`,
    '',
    "where a target's time goes (from publishing's own records):",
    '  throughput phase:',
    ...throughputSteps.map((l) => `    ${l}`),
    '  wait=true phase (one post at a time):',
    ...waitSteps.map((l) => `    ${l}`),
    'Postgres connections during the throughput phase (average of 250 ms samples):',
    ...connections.map((l) => `  ${l}`),
    '',
    `exactly once: ${duplicates === 0 ? 'yes' : 'NO'}  (${duplicates} duplicate (account, caption) pairs in the sandbox's log; ${productEntries} product publishes, expected ${targetsPublished + sustainedCount * 2 + ALONE_POSTS * 4 + (WAIT_POSTS - waitNotPublished) * 2})`,
    '',
    `targets (issue 6, 2-core machine):`,
    `  ≥ ${TARGETS.throughput} targets/s end to end:   ${throughput.toFixed(0)}  ${verdict(throughput >= TARGETS.throughput)}`,
    `  POST /v1/posts p99 < ${TARGETS.postP99} ms (under the target load): ${fmt(sustainedP99)} ms  ${verdict(sustainedP99 < TARGETS.postP99)}`,
    `  wait=true overhead p50 < ${TARGETS.waitOverheadP50} ms: ${fmt(overheadP50)} ms  ${verdict(overheadP50 < TARGETS.waitOverheadP50)}`,
    '',
    `Processes: identity, accounts, webhooks, publishing (its API, and one worker replica with ${WORKER_CONCURRENCY} jobs in flight, at nice ${WORKER_NICE}), gateway and graph-sandbox each on their own; Postgres, NATS and Redis local; this runner drives load, watches post events and sends the direct calls. Run took ${((performance.now() - benchStart) / 1000).toFixed(0)} s.`,
  ];
  if (profileDir) lines.push(`CPU profiles of every service: ${profileDir} (written when the services stop)`);
  process.stdout.write(`${lines.join('\n')}\n`);
  if (failures + sustainedFailures > 0 || notPublished + sustainedNotPublished > 0 || duplicates > 0)
    exitCode = 1;
} catch (error) {
  say(`bench failed: ${error instanceof Error ? (error.stack ?? error.message) : String(error)}`);
  exitCode = 1;
} finally {
  say('cleaning up …');
  await cleanup();
  say('done');
}
process.exit(exitCode);
