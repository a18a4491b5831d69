// `pnpm bench:gateway`: drives GET /v1/workspaces/:id on the real gateway + identity with a partner key
// (auth + rate limit + gRPC + Postgres on every request) and, in the same run, two baselines:
//   (a) a bare Fastify "hello" route,
//   (b) the minimal hand-built version of the same path (bench/minimal.ts).
// Each target runs alone in its own child process (started, measured, stopped in turn) while
// autocannon runs here, so the load generator never shares an event loop with the server.
// Prints req/s, p50, p99 and the ratios against the targets of issue 27, and beside them the CPU each
// request cost the target's process and the machine while measured (the steadier figure when the
// machine's speed drifts between rounds).
//
// The minimal path and the product run in ROUNDS alternating rounds (a fresh process each time);
// the verdict is on the mean of the rounds' ratios.
//
// Environment: BENCH_DURATION_S (default 10), BENCH_WARMUP_S (2), BENCH_CONNECTIONS (50), BENCH_ROUNDS (2),
// BENCH_CPU_PROF=1 writes V8 CPU profiles of the minimal and product processes into $TMPDIR/bench-profiles-<run>/.
import { randomBytes } from 'node:crypto';
import { mkdirSync } from 'node:fs';
import { availableParallelism, tmpdir } from 'node:os';
import path from 'node:path';
import { removePrefixedState } from '@svc/testing/system';
import autocannon, { type Result } from 'autocannon';
import { type Child, cleanUpOnInterrupt, envVar, startChild } from './child.ts';
import { type BenchDatabase, createBenchDatabase } from './database.ts';
import { cpuBreakdown, cpuSnapshot } from './publish/machine.ts';

const DURATION_S = Number(envVar('BENCH_DURATION_S', '10'));
const WARMUP_S = Number(envVar('BENCH_WARMUP_S', '2'));
const CONNECTIONS = Number(envVar('BENCH_CONNECTIONS', '50'));
const CPU_PROFILE = envVar('BENCH_CPU_PROF', '') === '1';
const ROUNDS = Math.max(1, Number(envVar('BENCH_ROUNDS', '2')));
const roundSuffix = (round: number) => (ROUNDS > 1 ? ` #${round}` : '');
const REDIS_URL = envVar('REDIS_URL', 'redis://127.0.0.1:6379');
const NATS_URL = envVar('NATS_URL', 'nats://127.0.0.1:4222');

const run = randomBytes(4).toString('hex');
const redisPrefix = `bench${run}:`;
const natsPrefix = `bench${run}`;

interface Measurement {
  name: string;
  processes: string;
  result: Result;
  /** CPU microseconds per answered request while measured: the target's process, and the machine's. */
  cpu: { serverUs: number; machineUs: number };
}

const children = new Set<Child>();
let database: BenchDatabase | undefined;

async function measure(name: string, file: string, nodeFlags: string[] = []): Promise<Measurement> {
  process.stderr.write(`\n▶ ${name}: starting ${file}\n`);
  const childEnv = {
    DATABASE_URL: database?.url ?? '',
    REDIS_PREFIX: redisPrefix,
    NATS_PREFIX: natsPrefix,
    REDIS_URL,
    NATS_URL,
  };
  const child = await startChild(name, file, childEnv, nodeFlags);
  children.add(child);
  try {
    const { url, path: target, token, processes } = child.ready;
    const options = {
      url: `${url}${target}`,
      connections: CONNECTIONS,
      headers: token ? { authorization: `Bearer ${token}` } : ({} as Record<string, string>),
    };
    process.stderr.write(`  warm-up ${WARMUP_S} s …\n`);
    await autocannon({ ...options, duration: WARMUP_S });
    process.stderr.write(`  measuring ${DURATION_S} s at ${CONNECTIONS} connections …\n`);
    const before = cpuSnapshot();
    const result = await autocannon({ ...options, duration: DURATION_S });
    const cpu = cpuPerRequest(before, child, result);
    // Let requests still queued in the server finish before it is told to stop.
    await new Promise((resolve) => setTimeout(resolve, 1_000));
    return { name, processes, result, cpu };
  } finally {
    await child.stop();
    children.delete(child);
  }
}

/**
 * What a request cost in CPU: a throughput ratio moves with whatever else the machine runs in its
 * window, CPU per request much less, so it tells a slow spell from slower code.
 */
function cpuPerRequest(before: ReturnType<typeof cpuSnapshot>, child: Child, result: Result) {
  const pid = child.process.pid ?? 0;
  const window = cpuBreakdown(before, cpuSnapshot(), DURATION_S, new Map([[pid, 'server']]));
  const requests = Math.max(1, result.requests.total);
  const cores = availableParallelism();
  return {
    serverUs: (window.msOf('server') * 1000) / requests,
    machineUs: (window.machineBusy * cores * DURATION_S * 1e6) / requests,
  };
}

let cleaning: Promise<void> | undefined;
function cleanup(): Promise<void> {
  cleaning ??= (async () => {
    const step = async (what: string, fn: () => Promise<unknown>) => {
      try {
        await fn();
      } catch (error) {
        process.stderr.write(`cleanup: ${what} failed: ${String(error)}\n`);
      }
    };
    for (const child of children) await step(`stopping ${child.name}`, () => child.stop());
    await step('deleting NATS streams and Redis keys', () =>
      removePrefixedState(natsPrefix, { REDIS_URL, NATS_URL }),
    );
    const created = database;
    if (created) await step('dropping the database', () => created.drop());
  })();
  return cleaning;
}

cleanUpOnInterrupt(cleanup);

function format(measurements: Measurement[]): { table: string; failed: boolean } {
  const rows = measurements.map(({ name, processes, result, cpu }) => ({
    name,
    processes,
    cpu,
    rps: result.requests.average,
    p50: result.latency.p50,
    p99: result.latency.p99,
    ok: result['2xx'],
    bad: result.non2xx + result.errors + result.timeouts,
    detail: `non-2xx ${result.non2xx}, errors ${result.errors}, timeouts ${result.timeouts}`,
  }));
  const header = [
    'target',
    'req/s',
    'p50 ms',
    'p99 ms',
    'CPU µs/req',
    'machine µs/req',
    '2xx',
    'non-2xx/errors',
    'layout',
  ];
  const body = rows.map((r) => [
    r.name,
    r.rps.toFixed(0),
    r.p50.toFixed(1),
    r.p99.toFixed(1),
    r.cpu.serverUs.toFixed(0),
    r.cpu.machineUs.toFixed(0),
    String(r.ok),
    r.bad === 0 ? '0' : r.detail,
    r.processes,
  ]);
  const widths = header.map((h, i) => Math.max(h.length, ...body.map((row) => (row[i] ?? '').length)));
  const line = (cells: string[]) => cells.map((c, i) => c.padEnd(widths[i] ?? 0)).join('  ');
  const lines = [line(header), widths.map((w) => '-'.repeat(w)).join('  '), ...body.map(line)];

  // Each round's minimal path and product ran back to back; the verdict is on the mean of the
  // rounds' ratios, so a slow spell of the machine during one target weighs less.
  const ratios: { throughput: number; p99: number; cpu: number }[] = [];
  for (let round = 1; round <= ROUNDS; round++) {
    const minimal = rows.find((r) => r.name === `minimal path${roundSuffix(round)}`);
    const product = rows.find((r) => r.name === `product${roundSuffix(round)}`);
    if (minimal && product)
      ratios.push({
        throughput: product.rps / minimal.rps,
        p99: product.p99 / minimal.p99,
        cpu: product.cpu.serverUs / minimal.cpu.serverUs,
      });
  }
  if (ratios.length > 0) {
    const mean = (values: number[]) => values.reduce((a, b) => a + b, 0) / values.length;
    const throughputRatio = mean(ratios.map((r) => r.throughput));
    const p99Ratio = mean(ratios.map((r) => r.p99));
    const cpuRatio = mean(ratios.map((r) => r.cpu));
    const each = (pick: (r: { throughput: number; p99: number; cpu: number }) => string) =>
      ratios.length > 1 ? ` (rounds: ${ratios.map(pick).join(', ')})` : '';
    lines.push(
      '',
      `product / minimal throughput: ${(throughputRatio * 100).toFixed(1)}%${each((r) => `${(r.throughput * 100).toFixed(1)}%`)}  (target of issue 27 ≥ 85%: ${throughputRatio >= 0.85 ? 'MET' : 'NOT MET'})`,
      `product p99 / minimal p99:    ${p99Ratio.toFixed(2)}×${each((r) => `${r.p99.toFixed(2)}×`)}  (target of issue 27 ≤ 1.3×: ${p99Ratio <= 1.3 ? 'MET' : 'NOT MET'})`,
      `product / minimal CPU per request (the server process): ${cpuRatio.toFixed(2)}×${each((r) => `${r.cpu.toFixed(2)}×`)}`,
    );
  }
  lines.push(
    '',
    `${CONNECTIONS} connections, ${WARMUP_S} s warm-up then ${DURATION_S} s measured per target; each target alone in its own child process, autocannon in the runner; ${ROUNDS} round(s) of the minimal path then the product.`,
  );
  const failed = rows.some((r) => r.bad > 0 || r.ok === 0);
  for (const r of rows.filter((row) => row.bad > 0 || row.ok === 0)) {
    lines.push(`FAIL: ${r.name} answered ${r.ok} 2xx with ${r.detail}; the figures are not valid.`);
  }
  return { table: lines.join('\n'), failed };
}

let exitCode = 0;
try {
  database = await createBenchDatabase(`bench_${run}`, (line) => process.stderr.write(`${line}\n`));

  const measurements: Measurement[] = [];
  const profileDir = path.join(tmpdir(), `bench-profiles-${run}`);
  if (CPU_PROFILE) mkdirSync(profileDir, { recursive: true });
  const profiled = (name: string) =>
    CPU_PROFILE ? ['--cpu-prof', `--cpu-prof-dir=${profileDir}`, `--cpu-prof-name=${name}.cpuprofile`] : [];
  measurements.push(await measure('bare Fastify', 'hello.ts'));
  for (let round = 1; round <= ROUNDS; round++) {
    const suffix = roundSuffix(round);
    measurements.push(await measure(`minimal path${suffix}`, 'minimal.ts', profiled(`minimal-${round}`)));
    measurements.push(await measure(`product${suffix}`, 'stack.ts', profiled(`product-${round}`)));
  }

  const { table, failed } = format(measurements);
  process.stdout.write(`\n${table}\n`);
  if (CPU_PROFILE)
    process.stdout.write(`CPU profiles of the minimal and product processes written to ${profileDir}\n`);
  if (failed) exitCode = 1;
} catch (error) {
  process.stderr.write(
    `bench failed: ${error instanceof Error ? (error.stack ?? error.message) : String(error)}\n`,
  );
  exitCode = 1;
} finally {
  await cleanup();
}
process.exit(exitCode);
