// The phases of bench:publish that load the pipeline: warm-up, throughput (1) and the target
// load (1b).
import { monitorEventLoopDelay } from 'node:perf_hooks';
import { counterSum } from '@svc/testing';
import { gatewayClient } from './clients.ts';
import type { RunContext } from './context.ts';
import {
  cpuBreakdown,
  cpuSnapshot,
  histogramOf,
  quantileBound,
  sampleDatabase,
  transactionsCommitted,
} from './machine.ts';
import {
  CONCURRENCY,
  POSTS,
  PROBE_INTERVAL_MS,
  pool,
  run,
  SETTLE_TIMEOUT_MS,
  SUSTAINED_COUNT,
  SUSTAINED_RATE,
  say,
  sleep,
  TARGETS,
  WORKSPACES,
} from './settings.ts';

/** One post per workspace through the product, one direct chain pair per workspace. */
export async function warmUp(ctx: RunContext): Promise<void> {
  say('warm-up …');
  const warmIds: string[] = [];
  await pool(WORKSPACES, 4, async (i) => {
    const created = await ctx.gateway.call('POST', '/v1/posts', ctx.postBody(i, 'warm'));
    if (created.status !== 201)
      throw new Error(`warm-up POST: ${created.status} ${JSON.stringify(created.body)}`);
    warmIds.push(created.body.id as string);
  });
  await ctx.watcher.all(warmIds, 30_000);
  await pool(WORKSPACES, 4, async (i) => {
    const f = ctx.fixtureOf(i);
    await Promise.all([
      ctx.direct.instagram(f.ig, `warm direct ${run} ig ${i}`),
      ctx.direct.page(f.page, `warm direct ${run} page ${i}`),
    ]);
  });
}

/** The signed downloads publishing has served a file for (the others shared a read at the gateway). */
const fileReads = (ctx: RunContext) =>
  counterSum(ctx.publishingMetricsUrl, 'grpc_server_handled_total', ['MediaFile"', 'code="OK"']);

/** Posts created by CONCURRENCY clients, each sending its next POST on the last answer. */
async function createAtSaturation(ctx: RunContext) {
  const latencies: number[] = [];
  const sentAt = new Map<string, number>();
  const ids: string[] = [];
  let failures = 0;
  await pool(POSTS, CONCURRENCY, async (i) => {
    const sent = performance.now();
    const created = await ctx.gateway.call('POST', '/v1/posts', ctx.postBody(i, 'post'));
    if (created.status !== 201) {
      failures++;
      if (failures <= 3) say(`POST /v1/posts answered ${created.status}: ${JSON.stringify(created.body)}`);
      return;
    }
    latencies.push(created.ms);
    const id = created.body.id as string;
    sentAt.set(id, sent);
    ids.push(id);
  });
  return { latencies, sentAt, ids, failures };
}

/** The probe samples latency, it is not load: one request every PROBE_INTERVAL_MS at most. */
function probeWhile(ctx: RunContext, creating: () => boolean) {
  const latencies: number[] = [];
  const done = (async () => {
    let i = 0;
    while (creating()) {
      const got = await ctx.gateway.call('GET', `/v1/workspaces/${ctx.fixtureOf(i++).workspace}`);
      if (got.status === 200) latencies.push(got.ms);
      await sleep(Math.max(0, PROBE_INTERVAL_MS - got.ms));
    }
  })();
  return { latencies, done };
}

/** 1. Throughput and POST latency. */
export async function throughputPhase(ctx: RunContext) {
  say(`▶ throughput: ${POSTS} posts × 2 targets, ${CONCURRENCY} clients creating …`);
  const cpuBefore = cpuSnapshot();
  const transactionsBefore = await transactionsCommitted();
  const fileReadsBefore = await fileReads(ctx);
  const database = sampleDatabase(ctx.processes);
  const started = performance.now();
  let creating = true;
  const probe = probeWhile(ctx, () => creating);
  const created = await createAtSaturation(ctx);
  const createdSeconds = (performance.now() - started) / 1000;
  creating = false;
  await probe.done;
  await ctx.watcher.all(created.ids, SETTLE_TIMEOUT_MS);
  const settlements = created.ids.map((id) => ctx.watcher.settled.get(id) ?? missing(id));
  const e2eSeconds = (Math.max(...settlements.map((s) => s.at)) - started) / 1000;
  const cpu = cpuBreakdown(cpuBefore, cpuSnapshot(), e2eSeconds, ctx.processes);
  const connections = await database.stop();
  const targetsPublished = settlements.reduce((n, s) => n + s.published, 0);
  const targetsTotal = settlements.reduce((n, s) => n + s.targets, 0);
  // pg_stat_database is updated when a backend reports (at most every 500 ms or so); let it.
  await sleep(1_500);
  const transactionsPerTarget = ((await transactionsCommitted()) - transactionsBefore) / targetsTotal;
  const fileReadsPerTarget = ((await fileReads(ctx)) - fileReadsBefore) / targetsTotal;
  return {
    ...created,
    fileReadsPerTarget,
    probeLatencies: probe.latencies,
    createdSeconds,
    e2eSeconds,
    cpu,
    connections,
    targetsPublished,
    targetsTotal,
    transactionsPerTarget,
    notPublished: settlements.filter((s) => s.status !== 'published').length,
    throughput: targetsPublished / e2eSeconds,
    postToSettled: created.ids.map(
      (id) => (ctx.watcher.settled.get(id)?.at ?? 0) - (created.sentAt.get(id) ?? 0),
    ),
  };
}

export type Throughput = Awaited<ReturnType<typeof throughputPhase>>;

function missing(id: string): never {
  throw new Error(`post ${id} has no settlement`);
}

/** Posts sent at SUSTAINED_RATE, each when it is due (open loop); latency counts from then. */
async function sendOpenLoop(ctx: RunContext, started: number) {
  const sustained = gatewayClient(ctx.gatewayUrl, ctx.key, 256);
  const latencies: number[] = [];
  const ids: string[] = [];
  const sent = new Map<string, number>();
  let failures = 0;
  await Promise.all(
    Array.from({ length: SUSTAINED_COUNT }, async (_, i) => {
      const due = started + (i * 1000) / SUSTAINED_RATE;
      await sleep(Math.max(0, due - performance.now()));
      const created = await sustained.call('POST', '/v1/posts', ctx.postBody(i, 'sustained'));
      if (created.status !== 201) {
        failures++;
        return;
      }
      latencies.push(performance.now() - due);
      sent.set(created.body.id as string, due);
      ids.push(created.body.id as string);
    }),
  );
  await sustained.close();
  return { latencies, ids, sent, failures };
}

/**
 * 1b. POST latency under the target load: posts sent at a fixed rate (open loop: each at its
 * time, whatever the answers before it), two targets each, the rate of the throughput target.
 * Latency counts from the moment a POST was due, so a late sender cannot hide a slow answer.
 */
export async function sustainedPhase(ctx: RunContext) {
  say(
    `▶ sustained: ${SUSTAINED_COUNT} posts at ${SUSTAINED_RATE}/s (${TARGETS.throughput} targets/s), open loop …`,
  );
  const cpuBefore = cpuSnapshot();
  // The runner's own lateness: a POST it sends late counts against the service (latency runs from
  // when the POST was due), so its event loop's delay is reported beside the latencies.
  const runnerDelay = monitorEventLoopDelay({ resolution: 5 });
  runnerDelay.enable();
  const serverBefore = await serverPostTimes(ctx);
  const started = performance.now();
  const sent = await sendOpenLoop(ctx, started);
  runnerDelay.disable();
  const serverAfter = await serverPostTimes(ctx);
  await ctx.watcher.all(sent.ids, SETTLE_TIMEOUT_MS);
  const settled = sent.ids.map((id) => ctx.watcher.settled.get(id) ?? missing(id));
  const seconds = (Math.max(...settled.map((x) => x.at)) - started) / 1000;
  return {
    latencies: sent.latencies,
    failures: sent.failures,
    runnerDelayP99Ms: runnerDelay.percentile(99) / 1e6,
    server: {
      gatewayP50: quantileBound(serverBefore.gateway, serverAfter.gateway, 0.5),
      gatewayP99: quantileBound(serverBefore.gateway, serverAfter.gateway, 0.99),
      createPostP50: quantileBound(serverBefore.createPost, serverAfter.createPost, 0.5),
      createPostP99: quantileBound(serverBefore.createPost, serverAfter.createPost, 0.99),
    },
    cpu: cpuBreakdown(cpuBefore, cpuSnapshot(), seconds, ctx.processes),
    throughput: settled.reduce((n, x) => n + x.published, 0) / seconds,
    toSettled: sent.ids.map((id) => (ctx.watcher.settled.get(id)?.at ?? 0) - (sent.sent.get(id) ?? 0)),
    notPublished: settled.filter((x) => x.status !== 'published').length,
  };
}

export type Sustained = Awaited<ReturnType<typeof sustainedPhase>>;

/** The POSTs as the services time them: the gateway (arrival to answer) and publishing's CreatePost. */
async function serverPostTimes(ctx: RunContext) {
  const [gateway, createPost] = await Promise.all([
    histogramOf(ctx.gatewayMetricsUrl, 'http_request_duration_seconds', [
      'method="POST"',
      'route="/v1/posts"',
    ]),
    histogramOf(ctx.publishingMetricsUrl, 'grpc_server_handling_seconds', ['/CreatePost"']),
  ]);
  return { gateway, createPost };
}
