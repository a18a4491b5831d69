// The phases of bench:publish that time one thing at a time against its baseline: the sandbox's
// ceiling (2), POST alone (3), wait=true (4) and the image download (5).
import { createClient, PublishingService } from '@svc/contracts';
import type { RunContext } from './context.ts';
import { downloadCpu, timedDownload } from './downloads.ts';
import { cpuBreakdown, cpuSnapshot } from './machine.ts';
import {
  ALONE_POSTS,
  CEILING_POSTS,
  CEILING_ROUNDS,
  pool,
  run,
  say,
  WAIT_POSTS,
  WORKER_CONCURRENCY,
} from './settings.ts';

/**
 * The sandbox's ceiling: the median of its measured rounds (targets/s), each round's, and the CPU
 * of each process over the measured rounds (which one is at a whole core is what bounds it).
 */
export interface Ceiling {
  rate: number;
  rounds: number[];
  cpuLine: string;
}

/**
 * 2. The sandbox's own ceiling: the same calls directly, as many in flight as one replica's
 * workers. A round of a few hundred targets lasts a fraction of a second, so one slow moment
 * (a GC, the scheduler) moved a single measurement by 2×: the median of the measured rounds is
 * the ceiling. Before them, an unmeasured round of twice their size opens the connections and
 * warms the direct client as the worker's is warm by then; a shorter warm-up left each measured
 * round faster than the one before, so the ceiling came out low.
 */
export async function ceilingPhase(ctx: RunContext): Promise<Ceiling> {
  const perRound = Math.max(1, Math.floor(CEILING_POSTS / CEILING_ROUNDS));
  say(
    `▶ sandbox ceiling: ${CEILING_ROUNDS} rounds of ${perRound * 2} targets' Graph calls directly (after a warm-up round of twice that), ${WORKER_CONCURRENCY} in flight …`,
  );
  let post = 0;
  const round = async (posts: number) => {
    const first = post;
    post += posts;
    const started = performance.now();
    await pool(posts * 2, WORKER_CONCURRENCY, async (t) => {
      const n = first + Math.floor(t / 2);
      const f = ctx.fixtureOf(n);
      const caption = `Bench ceiling ${run} #${n}`;
      await (t % 2 === 0 ? ctx.direct.instagram(f.ig, caption) : ctx.direct.page(f.page, caption));
    });
    return (posts * 2) / ((performance.now() - started) / 1000);
  };
  await round(perRound * 2);
  const rounds: number[] = [];
  const cpuBefore = cpuSnapshot();
  const started = performance.now();
  for (let i = 0; i < CEILING_ROUNDS; i++) rounds.push(await round(perRound));
  const cpu = cpuBreakdown(cpuBefore, cpuSnapshot(), (performance.now() - started) / 1000, ctx.processes);
  const sorted = [...rounds].sort((a, b) => a - b);
  return { rate: sorted[Math.floor(sorted.length / 2)] ?? 0, rounds, cpuLine: cpu.line };
}

/**
 * 3. POST alone: one post at a time, the next only once the last settled (no load behind it);
 * beside each, the same create sent straight to publishing over gRPC, as the gateway sends it.
 */
export async function alonePhase(ctx: RunContext) {
  say(`▶ POST alone: ${ALONE_POSTS} posts one at a time, each left to settle before the next …`);
  const aloneLatencies: number[] = [];
  const grpcLatencies: number[] = [];
  const publishing = createClient(PublishingService, ctx.publishingUrl);
  for (let i = 0; i < ALONE_POSTS; i++) {
    const created = await ctx.gateway.call('POST', '/v1/posts', ctx.postBody(i, 'alone'));
    if (created.status !== 201)
      throw new Error(`POST alone: ${created.status} ${JSON.stringify(created.body)}`);
    aloneLatencies.push(created.ms);
    await ctx.watcher.all([created.body.id as string], 30_000);
    const body = ctx.postBody(i, 'grpc');
    const t0 = performance.now();
    const { postJson } = await publishing.createPost({
      caller: { partnerId: ctx.partnerId, workspaceId: '' },
      workspaceId: body.workspace,
      caption: body.caption,
      mediaIds: body.media,
      accountIds: body.targets,
      optionsJson: '{}',
      createdBy: 'api',
    });
    grpcLatencies.push(performance.now() - t0);
    await ctx.watcher.all([(JSON.parse(postJson) as { id: string }).id], 30_000);
  }
  publishing.close();
  return { aloneLatencies, grpcLatencies };
}

/** 4. wait=true, one at a time, each paired with the sandbox's own time for the same two targets. */
export async function waitPhase(ctx: RunContext) {
  say(`▶ wait=true: ${WAIT_POSTS} posts one at a time, each beside the same calls sent directly …`);
  const waitLatencies: number[] = [];
  const sandboxLatencies: number[] = [];
  const overheads: number[] = [];
  let waitNotPublished = 0;
  for (let i = 0; i < WAIT_POSTS; i++) {
    const f = ctx.fixtureOf(i);
    const t0 = performance.now();
    await Promise.all([
      ctx.direct.instagram(f.ig, `Bench direct ${run} ig #${i}`),
      ctx.direct.page(f.page, `Bench direct ${run} page #${i}`),
    ]);
    const own = performance.now() - t0;
    const waited = await ctx.gateway.call('POST', '/v1/posts?wait=true', ctx.postBody(i, 'wait'));
    if (waited.status !== 201 || waited.body.status !== 'published') waitNotPublished++;
    sandboxLatencies.push(own);
    waitLatencies.push(waited.ms);
    overheads.push(waited.ms - own);
  }
  return { waitLatencies, sandboxLatencies, overheads, waitNotPublished };
}

interface SandboxPublished {
  account_id: string;
  caption: string;
  media_urls: string[];
}

/** Everything the sandbox published, oldest first. */
export async function sandboxPublished(sandboxUrl: string): Promise<SandboxPublished[]> {
  const log = (await (await fetch(`${sandboxUrl}/__sandbox/published`)).json()) as {
    data: SandboxPublished[];
  };
  return log.data;
}

/**
 * 5. One piece of a target's path alone: the image download the sandbox makes for each target,
 * from the gateway's signed URL vs the bare server. A URL's first fetch reads the file from
 * publishing (gateway → publishing gRPC → the media volume); a fetch of it within
 * MEDIA_FILE_KEEP_SECONDS after (the post's other network, as the throughput phase has it) is
 * answered from the gateway's kept copy. The signed URLs are those the sandbox was given for the
 * throughput phase's posts (a JPEG of their own each, last fetched more than 10 s ago), as the
 * product signed them.
 */
export async function downloadPhase(ctx: RunContext, bareUrl: string) {
  const signedUrls = await throughputMediaUrls(ctx.sandboxUrl);
  const latencyUrls = signedUrls.slice(0, LATENCY_DOWNLOADS);
  const firstDownloads: number[] = [];
  const keptDownloads: number[] = [];
  const bareDownloads: number[] = [];
  for (const url of latencyUrls) {
    firstDownloads.push(await timedDownload(url));
    keptDownloads.push(await timedDownload(url));
    bareDownloads.push(await timedDownload(bareUrl));
  }
  const cpuUrls = signedUrls.slice(LATENCY_DOWNLOADS);
  // The same URLs twice in a row: first their reads from publishing, then their kept copies.
  const read = await downloadCpu(ctx, cpuUrls);
  const kept = await downloadCpu(ctx, cpuUrls);
  return { firstDownloads, keptDownloads, bareDownloads, cpu: { read, kept } };
}

/** Downloads timed one at a time; the rest of the throughput phase's URLs measure CPU. */
const LATENCY_DOWNLOADS = 100;

/** One signed URL per post of the throughput phase (its two networks were given the same one). */
async function throughputMediaUrls(sandboxUrl: string): Promise<string[]> {
  const prefix = `Bench post ${run} #`;
  const urls = new Set<string>();
  for (const published of await sandboxPublished(sandboxUrl))
    if (published.caption.startsWith(prefix) && published.media_urls[0]) urls.add(published.media_urls[0]);
  if (urls.size <= LATENCY_DOWNLOADS)
    throw new Error(`the sandbox has only ${urls.size} throughput posts' URLs`);
  return [...urls];
}
