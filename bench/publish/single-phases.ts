// The phases of bench:publish that time one thing at a time against its baseline: the sandbox's
// ceiling (2), POST alone (3), wait=true (4) and the image download (5).
import { createClient, PublishingService } from '@svc/contracts';
import type { RunContext } from './context.ts';
import { cpuBreakdown, cpuSnapshot } from './machine.ts';
import {
  ALONE_POSTS,
  CEILING_POSTS,
  CEILING_ROUNDS,
  CONCURRENCY,
  pool,
  run,
  say,
  WAIT_POSTS,
  WORKER_CONCURRENCY,
  WORKSPACES,
} from './settings.ts';

/** The sandbox's ceiling: the median of its measured rounds (targets/s), and each round's. */
export interface Ceiling {
  rate: number;
  rounds: number[];
}

/**
 * 2. The sandbox's own ceiling: the same calls directly, as many in flight as one replica's
 * workers. A round of a few hundred targets lasts a fraction of a second, so one slow moment
 * (the direct client's first calls, a GC, the scheduler) moved a single measurement by 2×: an
 * unmeasured round opens the connections and warms the client, then the median of the measured
 * rounds is the ceiling.
 */
export async function ceilingPhase(ctx: RunContext): Promise<Ceiling> {
  const perRound = Math.max(1, Math.floor(CEILING_POSTS / CEILING_ROUNDS));
  say(
    `▶ sandbox ceiling: ${CEILING_ROUNDS} rounds of ${perRound * 2} targets' Graph calls directly (after a warm-up round), ${WORKER_CONCURRENCY} in flight …`,
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
  await round(Math.ceil(perRound / 2));
  const rounds: number[] = [];
  for (let i = 0; i < CEILING_ROUNDS; i++) rounds.push(await round(perRound));
  const sorted = [...rounds].sort((a, b) => a - b);
  return { rate: sorted[Math.floor(sorted.length / 2)] ?? 0, rounds };
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
 * from the gateway's signed URL (gateway → publishing gRPC → the media volume) vs the bare server.
 * The signed URLs are those the sandbox was given for the warm-up posts' JPEGs (one per
 * workspace, uploaded before the phases, read once since), as the product signed them.
 */
export async function downloadPhase(ctx: RunContext, bareUrl: string) {
  const signedUrls = await warmUpMediaUrls(ctx.sandboxUrl);
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
    productDownloads.push(await download(signedUrls[i % signedUrls.length] ?? ''));
    bareDownloads.push(await download(bareUrl));
  }
  return { productDownloads, bareDownloads, cpu: await downloadCpu(ctx, signedUrls, download) };
}

/** Signed downloads this phase sends, as many in flight as the throughput phase has POST clients. */
const CPU_DOWNLOADS = 2_000;

/**
 * What one signed download costs the system in CPU (gateway → publishing's file stream), under
 * load: each target's container or photo makes Meta fetch one.
 */
async function downloadCpu(ctx: RunContext, urls: string[], download: (url: string) => Promise<number>) {
  const before = cpuSnapshot();
  const started = performance.now();
  await pool(CPU_DOWNLOADS, CONCURRENCY, async (i) => {
    await download(urls[i % urls.length] ?? '');
  });
  const cpu = cpuBreakdown(before, cpuSnapshot(), (performance.now() - started) / 1000, ctx.processes);
  return {
    perDownloadMs: cpu.systemMs / CPU_DOWNLOADS,
    gatewayMs: cpu.msOf('gateway') / CPU_DOWNLOADS,
    publishingMs: cpu.msOf('publishing') / CPU_DOWNLOADS,
  };
}

async function warmUpMediaUrls(sandboxUrl: string): Promise<string[]> {
  const published = await sandboxPublished(sandboxUrl);
  return Array.from({ length: WORKSPACES }, (_, i) => {
    const caption = `Bench warm ${run} #${i}`;
    const url = published.find((p) => p.caption === caption)?.media_urls[0];
    if (!url) throw new Error(`the sandbox has no publish of "${caption}"`);
    return url;
  });
}
