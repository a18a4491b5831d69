// What bench:publish prints: every figure beside its baseline, then MET/NOT MET against the targets.

import type { largePhotoPhase } from './large-photos.ts';
import type { Sustained, Throughput } from './load-phases.ts';
import {
  ALONE_POSTS,
  benchStart,
  CONCURRENCY,
  fmt,
  POSTS,
  percentile as pct,
  SUSTAINED_COUNT,
  SUSTAINED_RATE,
  SUSTAINED_SECONDS,
  TARGETS,
  VIDEO_IMAGE_POSTS,
  VIDEO_POSTS,
  VIDEO_PROCESSING_MS,
  verdict,
  WAIT_POSTS,
  WORKER_CONCURRENCY,
  WORKER_NICE,
} from './settings.ts';
import type { alonePhase, Ceiling, downloadPhase, waitPhase } from './single-phases.ts';
import type { VideoResults } from './video-phase.ts';

export interface Results {
  throughput: Throughput;
  sustained: Sustained;
  ceiling: Ceiling;
  alone: Awaited<ReturnType<typeof alonePhase>>;
  wait: Awaited<ReturnType<typeof waitPhase>>;
  downloads: Awaited<ReturnType<typeof downloadPhase>>;
  largePhotos: Awaited<ReturnType<typeof largePhotoPhase>>;
  video: VideoResults;
  throughputSteps: string[];
  waitSteps: string[];
  duplicates: number;
  productEntries: number;
}

function throughputLines({ throughput: t, ceiling }: Results): string[] {
  return [
    `throughput: ${t.targetsPublished} of ${t.targetsTotal} targets published in ${t.e2eSeconds.toFixed(1)} s end to end → ${t.throughput.toFixed(0)} targets/s  (${POSTS} posts created in ${t.createdSeconds.toFixed(1)} s = ${(t.ids.length / t.createdSeconds).toFixed(0)} posts/s; ${t.failures} POSTs refused; ${t.notPublished} posts not 'published')`,
    `  POST → post settled: p50 ${fmt(pct(t.postToSettled, 0.5))} ms, p99 ${fmt(pct(t.postToSettled, 0.99))} ms, max ${fmt(Math.max(...t.postToSettled))} ms`,
    `  sandbox ceiling (same Graph calls directly, ${WORKER_CONCURRENCY} in flight; median of rounds at ${ceiling.rounds.map((r) => r.toFixed(0)).join(', ')}): ${ceiling.rate.toFixed(0)} targets/s → product / sandbox ${((t.throughput / ceiling.rate) * 100).toFixed(1)}%`,
    `    CPU over the ceiling's rounds (% of one core; the process at a whole core bounds it): ${ceiling.cpuLine}`,
    `  Postgres transactions committed per target (all services; a standalone statement counts as one): ${t.transactionsPerTarget.toFixed(1)}`,
    `  media files read from publishing per target (each target's network fetches its image; fetches of one URL share a read at the gateway, in flight or kept): ${t.fileReadsPerTarget.toFixed(2)}`,
    `  CPU per target (every process of the system, Postgres, NATS and the sandbox included): ${cpuPerTarget(t).toFixed(2)} ms`,
    `  CPU while it ran (% of one core; ${(t.cpu.machineBusy * 100).toFixed(0)}% of the machine's 2 cores busy, ${(t.cpu.foreign * 100).toFixed(0)}% of a core by processes not of this run): ${t.cpu.line}`,
  ];
}

function postLines({ throughput: t, sustained: s, alone }: Results): string[] {
  const postP99 = pct(t.latencies, 0.99);
  const probeP99 = pct(t.probeLatencies, 0.99);
  return [
    `POST /v1/posts at saturation (the throughput phase, ${CONCURRENCY} clients each sending its next POST on the last answer): p50 ${fmt(pct(t.latencies, 0.5))} ms, p99 ${fmt(postP99)} ms, max ${fmt(Math.max(...t.latencies))} ms`,
    `POST /v1/posts under the target load (${SUSTAINED_COUNT} posts sent at ${SUSTAINED_RATE}/s for ${SUSTAINED_SECONDS} s, open loop, from when each was due): p50 ${fmt(pct(s.latencies, 0.5))} ms, p99 ${fmt(pct(s.latencies, 0.99))} ms, max ${fmt(Math.max(...s.latencies))} ms; ${s.failures} refused`,
    `  the same POSTs as the services timed them (their histograms' bucket bounds): gateway p50 ≤ ${s.server.gatewayP50} ms, p99 ≤ ${s.server.gatewayP99} ms; publishing's CreatePost p50 ≤ ${s.server.createPostP50} ms, p99 ≤ ${s.server.createPostP99} ms; this runner's own event-loop delay p99 ${fmt(s.runnerDelayP99Ms)} ms`,
    `  the pipeline meanwhile: ${s.throughput.toFixed(0)} targets/s published (first POST → last settlement); POST → post settled p50 ${fmt(pct(s.toSettled, 0.5))} ms, p99 ${fmt(pct(s.toSettled, 0.99))} ms; ${s.notPublished} posts not 'published'`,
    `  CPU meanwhile (% of one core; ${(s.cpu.machineBusy * 100).toFixed(0)}% of the machine's 2 cores busy): ${s.cpu.line}`,
    `  the same POST alone (one at a time, nothing else running, ${ALONE_POSTS}): p50 ${fmt(pct(alone.aloneLatencies, 0.5))} ms, p99 ${fmt(pct(alone.aloneLatencies, 0.99))} ms; of which publishing's CreatePost over gRPC alone: p50 ${fmt(pct(alone.grpcLatencies, 0.5))} ms, p99 ${fmt(pct(alone.grpcLatencies, 0.99))} ms`,
    `  baseline GET /v1/workspaces/:id, same load, one client: p50 ${fmt(pct(t.probeLatencies, 0.5))} ms, p99 ${fmt(probeP99)} ms → POST p99 / GET p99 ${(postP99 / probeP99).toFixed(2)}×`,
  ];
}

function waitLines({ wait: w, downloads: d, largePhotos: large }: Results): string[] {
  const waitP50 = pct(w.waitLatencies, 0.5);
  const ownP50 = pct(w.sandboxLatencies, 0.5);
  return [
    `wait=true, one at a time (${WAIT_POSTS}): p50 ${fmt(waitP50)} ms, p99 ${fmt(pct(w.waitLatencies, 0.99))} ms; ${w.waitNotPublished} not 'published' in the answer`,
    `  sandbox's own time for the same 2 targets (direct, in parallel): p50 ${fmt(ownP50)} ms, p99 ${fmt(pct(w.sandboxLatencies, 0.99))} ms → wait=true / sandbox ${(waitP50 / ownP50).toFixed(2)}×`,
    `  overhead (wait=true − sandbox, per pair): p50 ${fmt(pct(w.overheads, 0.5))} ms, p99 ${fmt(pct(w.overheads, 0.99))} ms`,
    `  the image download the sandbox makes per target, one at a time: signed gateway URL, first fetch (read from publishing) p50 ${fmt(pct(d.firstDownloads, 0.5))} ms, p99 ${fmt(pct(d.firstDownloads, 0.99))} ms; again at once (the gateway's kept copy) p50 ${fmt(pct(d.keptDownloads, 0.5))} ms; the same bytes from a bare server p50 ${fmt(pct(d.bareDownloads, 0.5))} ms`,
    `  CPU per signed download (${CONCURRENCY} at a time, ${d.cpu.read.count} URLs): first fetch ${cpuLine(d.cpu.read)}; again at once ${cpuLine(d.cpu.kept)}`,
    `  the same for a photo of ${(large.bytes / 1e6).toFixed(2)} MB, as partners post them (${large.read.count} URLs): first fetch ${cpuLine(large.read)}`,
  ];
}

const cpuLine = (c: { perDownloadMs: number; gatewayMs: number; publishingMs: number }) =>
  `${c.perDownloadMs.toFixed(2)} ms in all (gateway ${c.gatewayMs.toFixed(2)}, publishing ${c.publishingMs.toFixed(2)})`;

/** A Reel is published within 30 s of being ready (issue 28), so the checks are at most that far apart. */
const READY_TO_PUBLISHED_MS = 30_000;

function videoLines({ video: v }: Results): string[] {
  const overP99 = pct(v.reelToSettled, 0.99) - VIDEO_PROCESSING_MS;
  const imagesP99 = pct(v.imageToSettled, 0.99);
  if (VIDEO_POSTS === 0)
    return [
      `video: no Reels (BENCH_VIDEO_POSTS=0); ${VIDEO_IMAGE_POSTS} image posts: POST → settled p50 ${fmt(pct(v.imageToSettled, 0.5))} ms, p99 ${fmt(imagesP99)} ms`,
    ];
  return [
    `video: ${VIDEO_POSTS} Reels with ${VIDEO_PROCESSING_MS} ms of processing each: POST → published p50 ${fmt(pct(v.reelToSettled, 0.5))} ms, p99 ${fmt(pct(v.reelToSettled, 0.99))} ms (after processing: p99 ${fmt(overP99)} ms); ${v.notPublished} posts of the phase not 'published'`,
    `  Reels waiting on processing at once: at most ${v.heldAtOnce}, with ${WORKER_CONCURRENCY} job slots`,
    `  ${VIDEO_IMAGE_POSTS} image posts sent right behind them: POST → settled p50 ${fmt(pct(v.imageToSettled, 0.5))} ms, p99 ${fmt(imagesP99)} ms`,
    `  targets: a Reel published within ${READY_TO_PUBLISHED_MS / 1000} s of being ready (p99 ${fmt(overP99)} ms) ${verdict(overP99 < READY_TO_PUBLISHED_MS)}; more Reels in processing than slots (${v.heldAtOnce} > ${WORKER_CONCURRENCY}) ${verdict(v.heldAtOnce > WORKER_CONCURRENCY)}; images not held behind them (p99 ${fmt(imagesP99)} < ${VIDEO_PROCESSING_MS} ms) ${verdict(imagesP99 < VIDEO_PROCESSING_MS)}`,
  ];
}

function breakdownLines(r: Results): string[] {
  const expected =
    r.throughput.targetsPublished +
    SUSTAINED_COUNT * 2 +
    ALONE_POSTS * 4 +
    (WAIT_POSTS - r.wait.waitNotPublished) * 2;
  return [
    "where a target's time goes (from the pipeline's own records):",
    '  throughput phase:',
    ...r.throughputSteps.map((l) => `    ${l}`),
    '  wait=true phase (one post at a time):',
    ...r.waitSteps.map((l) => `    ${l}`),
    'Postgres connections during the throughput phase (average of 250 ms samples):',
    ...r.throughput.connections.map((l) => `  ${l}`),
    '',
    `exactly once: ${r.duplicates === 0 ? 'yes' : 'NO'}  (${r.duplicates} duplicate (account, caption) pairs in the sandbox's log; ${r.productEntries} product publishes, expected ${expected})`,
  ];
}

const cpuPerTarget = (t: Throughput) => t.cpu.systemMs / Math.max(1, t.targetsPublished);

function targetLines({ throughput: t, sustained: s, wait: w, ceiling }: Results): string[] {
  const sustainedP99 = pct(s.latencies, 0.99);
  const settledP99 = pct(s.toSettled, 0.99);
  const overheadP50 = pct(w.overheads, 0.5);
  const share = t.throughput / ceiling.rate;
  return [
    `targets (issues 6 and 27, 2-core machine; ratios judged within this run):`,
    `  ≥ ${TARGETS.throughput} targets/s end to end:   ${t.throughput.toFixed(0)}  ${verdict(t.throughput >= TARGETS.throughput)}`,
    `  end to end ≥ ${TARGETS.ceilingShare * 100}% of the sandbox-direct ceiling: ${(share * 100).toFixed(1)}%  ${verdict(share >= TARGETS.ceilingShare)}`,
    `  ≤ ${TARGETS.transactionsPerTarget} Postgres transactions per target: ${t.transactionsPerTarget.toFixed(1)}  ${verdict(t.transactionsPerTarget <= TARGETS.transactionsPerTarget)}`,
    `  ≤ ${TARGETS.cpuMsPerTarget} ms of CPU per target: ${cpuPerTarget(t).toFixed(2)} ms  ${verdict(cpuPerTarget(t) <= TARGETS.cpuMsPerTarget)}`,
    `  POST /v1/posts p99 < ${TARGETS.postP99} ms (under the target load): ${fmt(sustainedP99)} ms  ${verdict(sustainedP99 < TARGETS.postP99)}`,
    `  POST → post settled p99 < ${TARGETS.settledP99} ms (under the target load): ${fmt(settledP99)} ms  ${verdict(settledP99 < TARGETS.settledP99)}`,
    `  wait=true overhead p50 < ${TARGETS.waitOverheadP50} ms: ${fmt(overheadP50)} ms  ${verdict(overheadP50 < TARGETS.waitOverheadP50)}`,
  ];
}

export function report(results: Results, profileDir: string | undefined): string[] {
  const lines = [
    '',
    ...throughputLines(results),
    ...postLines(results),
    ...waitLines(results),
    ...videoLines(results),
    '',
    ...breakdownLines(results),
    '',
    ...targetLines(results),
    '',
    `Processes: identity, accounts, webhooks, publishing (its API, and one worker replica with ${WORKER_CONCURRENCY} jobs in flight, at nice ${WORKER_NICE}), gateway and graph-sandbox each on their own; Postgres, NATS and Redis local; this runner drives load, watches post events and sends the direct calls. Run took ${((performance.now() - benchStart) / 1000).toFixed(0)} s.`,
  ];
  if (profileDir)
    lines.push(
      `CPU profiles of every service: ${profileDir} (written when the services stop; phases.json gives each phase's window on their clock)`,
    );
  return lines;
}

/** The run went wrong (not merely slow): refused POSTs, posts not published, a duplicate publish. */
export function runFailed({ throughput: t, sustained: s, video, duplicates }: Results): boolean {
  const notPublished = t.notPublished + s.notPublished + video.notPublished;
  return t.failures + s.failures > 0 || notPublished > 0 || duplicates > 0;
}
