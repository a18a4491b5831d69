// `pnpm bench:publish`: the publish pipeline end to end (issue 6, Speed). Every service runs in its
// own process from its production bundle (`turbo run build`, as `pnpm start` builds them), started
// by @svc/testing (publish/system.ts) —
// identity, accounts, webhooks, publishing as two processes (PUBLISHING_ROLE api and worker), the
// gateway and the graph-sandbox (zero container processing delay) — on a fresh database (cloned
// from a migrated template kept between runs, see database.ts), Redis prefix and NATS prefix of
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
//      client, as many in flight as one publishing replica runs (64), image served by a bare server;
//      a warm-up round (twice a measured one), then the median of 3 measured rounds.
//   3. POST alone: one post at a time with nothing else running, and the same create sent straight
//      to publishing over gRPC (what the gateway adds).
//   4. `wait=true`: one post at a time, each paired with the same two call chains sent directly
//      (in parallel, as the two workers would); overhead = wait=true latency − the sandbox's time.
//   5. the image download the sandbox makes per target: signed gateway URL (as the sandbox was given
//      it for the warm-up posts) vs a bare server.
//   5b. the same for photos the size partners post (about 1 MB each, BENCH_LARGE_PHOTOS of them):
//      CPU per first fetch (read from publishing) and per fetch of the gateway's kept copy.
//   6. video (issue 28): Reels (three times a worker's slots) whose containers the sandbox processes
//      for BENCH_VIDEO_PROCESSING_MS, then image posts right behind them: POST → published of
//      each, how many Reels wait on processing at once (more than the slots: none holds one), and
//      whether the images waited for them.
// Then where a target's time goes, step by step, from the pipeline's own records. Prints the figures,
// the ratios against the baselines, and MET/NOT MET against the targets; exits 1 only when the run
// itself went wrong (refused POSTs, posts not published, a duplicate publish).
//
// Environment: BENCH_POSTS (default 2000), BENCH_WORKSPACES (60), BENCH_CONCURRENCY (16),
// BENCH_SUSTAINED_SECONDS (20), BENCH_WAIT_POSTS (150), BENCH_CEILING_POSTS (750, in 3 measured rounds),
// BENCH_ALONE_POSTS (60), BENCH_LARGE_PHOTOS (100), BENCH_VIDEO_POSTS (48), BENCH_VIDEO_PROCESSING_MS (5000),
// BENCH_VIDEO_IMAGE_POSTS (100), BENCH_CPU_PROF=1
// writes V8 CPU profiles of every service into $TMPDIR/bench-publish-profiles-<run>/<service>/,
// BENCH_WORKER_NICE (6) is the publishing worker's nice level: as deployed (docker-compose.yml), the
// workers weigh a quarter of a request-serving process on the CPU (cpu_shares 256 of 1024; CFS
// weight 272 of 1024 at nice 6). BENCH_WORKER_NICE=0 runs them at the same priority.
import { mkdir } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { GraphClient, graphClientConfigFromEnv, parseGraphClientEnv } from '@svc/graph-client';
import { uploadFile } from '@svc/testing';
import type { System } from '@svc/testing/system';
import { cleanUpOnInterrupt } from './child.ts';
import { type BenchDatabase, createBenchDatabase } from './database.ts';
import { directCalls, gatewayClient, serveImage, watchSettlements } from './publish/clients.ts';
import { postBodies, type RunContext } from './publish/context.ts';
import { createFixtures } from './publish/fixtures.ts';
import { seedHistory } from './publish/history.ts';
import { largePhotoPhase } from './publish/large-photos.ts';
import { sustainedPhase, throughputPhase, warmUp } from './publish/load-phases.ts';
import { PhaseWindows } from './publish/phase-windows.ts';
import { report, runFailed } from './publish/report.ts';
import {
  ALONE_POSTS,
  CPU_PROFILE,
  databaseName,
  META_APP,
  POSTS,
  pool,
  run,
  SUSTAINED_COUNT,
  say,
  VIDEO_IMAGE_POSTS,
  WAIT_POSTS,
  WORKSPACES,
} from './publish/settings.ts';
import {
  alonePhase,
  ceilingPhase,
  downloadPhase,
  sandboxPublished,
  waitPhase,
} from './publish/single-phases.ts';
import { stepBreakdown } from './publish/steps.ts';
import { processNames, startPublishSystem } from './publish/system.ts';
import { videoPhase } from './publish/video-phase.ts';

let database: BenchDatabase | undefined;
let system: System | undefined;

/** The system, its partner (with the highest limit: the default 300 a minute would throttle the run) and fixtures. */
async function startEverything(profileDir: string | undefined) {
  say(`database ${databaseName} …`);
  database = await createBenchDatabase(databaseName, say);
  say('starting identity, graph-sandbox, accounts, webhooks, publishing and the gateway …');
  system = await startPublishSystem(database.url, profileDir);
  const partner = await system.createPartner(`bench-${run}`, {
    name: 'Publish benchmark partner',
    limitPerMinute: 1_000_000,
  });
  const at = {
    gatewayUrl: system.gatewayUrl,
    sandboxUrl: system.addresses.sandboxUrl,
    accountsUrl: system.addressOf('accounts'),
    sandboxControl: system.sandboxControl,
    key: partner.key,
  };
  say(`creating ${WORKSPACES} workspaces, each with a Page + Instagram account and a JPEG …`);
  const { fixtures, jpeg } = await createFixtures(at);
  const history = await seedHistory(database.url, partner.partnerId, fixtures);
  say(
    `${history} published posts of history (2 targets each) written before the run, as a database in service has`,
  );
  return { system, partner, at, fixtures, jpeg };
}

/**
 * Every post has media of its own, uploaded before its phase (not timed), as partners' posts do:
 * what the product keeps of a media (its row, its file) then serves the post's own targets only.
 */
async function uploadMedia(
  at: { gatewayUrl: string; key: string },
  workspaceOf: (i: number) => string,
  jpeg: Buffer,
) {
  const phases: [string, number][] = [
    ['warm', WORKSPACES],
    ['post', POSTS],
    ['sustained', SUSTAINED_COUNT],
    ['alone', ALONE_POSTS],
    ['grpc', ALONE_POSTS],
    ['wait', WAIT_POSTS],
    ['behind', VIDEO_IMAGE_POSTS],
  ];
  say(`uploading a JPEG for each post (${phases.reduce((n, [, count]) => n + count, 0)}) …`);
  const mediaOf = new Map<string, string[]>();
  for (const [label, count] of phases) {
    const ids: string[] = [];
    await pool(count, 8, async (i) => {
      ids[i] = await uploadFile(at.gatewayUrl, at.key, workspaceOf(i), jpeg, 'photo.jpg');
    });
    mediaOf.set(label, ids);
  }
  return mediaOf;
}

async function prepare(profileDir: string | undefined) {
  const started = await startEverything(profileDir);
  const { fixtureOf } = postBodies(started.fixtures, new Map());
  const mediaOf = await uploadMedia(started.at, (i) => fixtureOf(i).workspace, started.jpeg);
  const image = await serveImage(started.jpeg);
  const graph = new GraphClient(
    graphClientConfigFromEnv(parseGraphClientEnv({ GRAPH_API_BASE_URL: started.at.sandboxUrl }), META_APP),
  );
  const ctx: RunContext = {
    ...started.at,
    ...postBodies(started.fixtures, mediaOf),
    publishingUrl: started.system.addressOf('publishing'),
    gatewayMetricsUrl: metricsUrlOf(started.system, 'gateway'),
    publishingMetricsUrl: metricsUrlOf(started.system, 'publishing'),
    partnerId: started.partner.partnerId,
    processes: processNames(started.system),
    gateway: gatewayClient(started.at.gatewayUrl, started.at.key),
    watcher: await watchSettlements(),
    direct: directCalls(graph, image.url),
  };
  return { ctx, image };
}

/** The ops `/metrics` of the process labelled `label`. */
function metricsUrlOf(system: System, label: string): string {
  const instance = system.instances.find((i) => i.label === label);
  if (!instance) throw new Error(`no process labelled ${label}`);
  return `http://127.0.0.1:${instance.env.OPS_PORT}/metrics`;
}

/** Nothing posted twice: the sandbox's log holds each (account, caption) once. */
async function exactlyOnce(sandboxUrl: string) {
  const published = await sandboxPublished(sandboxUrl);
  const keys = published.map((p) => `${p.account_id} ${p.caption}`);
  return {
    duplicates: keys.length - new Set(keys).size,
    productEntries: published.filter((p) => / (post|sustained|alone|grpc|wait) /.test(p.caption ?? ''))
      .length,
  };
}

async function measure(profileDir: string | undefined): Promise<number> {
  const { ctx, image } = await prepare(profileDir);
  const phases = new PhaseWindows(profileDir);
  await phases.time('warm-up', () => warmUp(ctx));
  const throughput = await phases.time('throughput', () => throughputPhase(ctx));
  const sustained = await phases.time('sustained', () => sustainedPhase(ctx));
  const ceiling = await phases.time('ceiling', () => ceilingPhase(ctx));
  const alone = await phases.time('alone', () => alonePhase(ctx));
  const wait = await phases.time('wait', () => waitPhase(ctx));
  const downloads = await phases.time('downloads', () => downloadPhase(ctx, image.url));
  const largePhotos = await phases.time('large photos', () => largePhotoPhase(ctx));
  const video = await phases.time('video', () => videoPhase(ctx, database?.url ?? ''));
  await phases.write();
  await image.close();
  await ctx.gateway.close();
  await ctx.watcher.close();
  const url = database?.url ?? '';
  const results = {
    throughput,
    sustained,
    ceiling,
    alone,
    wait,
    downloads,
    largePhotos,
    video,
    ...(await exactlyOnce(ctx.sandboxUrl)),
    throughputSteps: await stepBreakdown(url, `Bench post ${run} %`),
    waitSteps: await stepBreakdown(url, `Bench wait ${run} %`),
  };
  process.stdout.write(`${report(results, profileDir).join('\n')}\n`);
  return runFailed(results) ? 1 : 0;
}

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
    // Stopping the system also removes its media folder, NATS streams and Redis keys.
    await step('stopping the services', async () => system?.stop());
    await step('dropping the database', async () => database?.drop());
  })();
  return cleaning;
}

cleanUpOnInterrupt(cleanup);

let exitCode = 0;
try {
  const profileDir = CPU_PROFILE ? path.join(tmpdir(), `bench-publish-profiles-${run}`) : undefined;
  if (profileDir) await mkdir(profileDir, { recursive: true });
  exitCode = await measure(profileDir);
} catch (error) {
  say(`bench failed: ${error instanceof Error ? (error.stack ?? error.message) : String(error)}`);
  exitCode = 1;
} finally {
  say('cleaning up …');
  await cleanup();
  say('done');
}
process.exit(exitCode);
