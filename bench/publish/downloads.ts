// Signed downloads as the sandbox makes them (a GET read to its end), timed, and what they cost in CPU.
import type { RunContext } from './context.ts';
import { cpuBreakdown, cpuSnapshot } from './machine.ts';
import { CONCURRENCY, pool } from './settings.ts';

/** One GET of `url` read to its end: milliseconds. */
export async function timedDownload(url: string): Promise<number> {
  const t0 = performance.now();
  const response = await fetch(url);
  await response.arrayBuffer();
  if (!response.ok) throw new Error(`GET ${url}: ${response.status}`);
  return performance.now() - t0;
}

/** CPU milliseconds per download, in all and of the two processes a signed download goes through. */
export interface DownloadCpu {
  count: number;
  perDownloadMs: number;
  gatewayMs: number;
  publishingMs: number;
}

/**
 * What one signed download costs the system in CPU, under load (as many in flight as the
 * throughput phase has POST clients): each target's container or photo makes Meta fetch one.
 */
export async function downloadCpu(ctx: RunContext, urls: string[]): Promise<DownloadCpu> {
  const before = cpuSnapshot();
  const started = performance.now();
  await pool(urls.length, CONCURRENCY, async (i) => {
    await timedDownload(urls[i] ?? '');
  });
  const cpu = cpuBreakdown(before, cpuSnapshot(), (performance.now() - started) / 1000, ctx.processes);
  return {
    count: urls.length,
    perDownloadMs: cpu.systemMs / urls.length,
    gatewayMs: cpu.msOf('gateway') / urls.length,
    publishingMs: cpu.msOf('publishing') / urls.length,
  };
}
