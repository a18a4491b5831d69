import { type ChildProcess, spawn, spawnSync } from 'node:child_process';
import { existsSync } from 'node:fs';
import path from 'node:path';
import { createInterface } from 'node:readline';
import { serviceNodeFlags } from '@svc/ops';
import { keepLine, type LogLine } from './logs.ts';

export const ROOT = path.resolve(import.meta.dirname, '../../..');

/** How a child runs: its source entry point through tsx, or its production bundle. */
export type ChildEntry = 'source' | 'bundle';

export interface ChildSpec {
  /** What this process is called in reports (`publishing-worker`). */
  label: string;
  /** The workspace folder whose entry point runs (`services/publishing`, `dev/graph-sandbox`). */
  folder: string;
  entry: ChildEntry;
  env: Record<string, string>;
  /** A URL that answers 2xx once the process takes traffic (its /readyz). */
  readyUrl: string;
  /** `capture`: JSON log lines kept in `logs`; `stderr`: the child writes straight to stderr. */
  logs: 'capture' | 'stderr';
  nodeFlags: string[];
}

/** A service running in a process of its own, so a test can `kill -9` it or a bench measure it. */
export interface ServiceChild {
  label: string;
  process: ChildProcess;
  /** Every JSON log line this process wrote, in order (with `logs: 'capture'`). */
  logs: LogLine[];
  exited: Promise<void>;
  /** Sends the signal (default SIGTERM, SIGKILL after 15 s) and waits for the process to be gone. */
  stop(signal?: NodeJS.Signals): Promise<void>;
  /** The same service again, with the same environment and ports, once this one is gone. */
  restart(): Promise<ServiceChild>;
}

const READY_TIMEOUT_MS = 90_000;

/** The services' production bundles (`dist/main.js`), built as `pnpm start` builds them. */
export function buildBundles(): void {
  const build = spawnSync(
    path.join(ROOT, 'node_modules/.bin/turbo'),
    ['run', 'build', '--output-logs=errors-only'],
    { cwd: ROOT, stdio: ['ignore', 2, 2] },
  );
  if (build.status !== 0) throw new Error(`turbo run build failed (exit ${build.status})`);
}

export async function startChild(spec: ChildSpec, sink: LogLine[]): Promise<ServiceChild> {
  const child = launch(spec);
  const logs: LogLine[] = [];
  if (child.stdout) {
    createInterface({ input: child.stdout }).on('line', (line) => {
      const before = logs.length;
      keepLine(logs, line);
      if (logs.length > before) sink.push(logs[before] as LogLine);
    });
  }
  const exited = new Promise<void>((resolve) => child.once('exit', () => resolve()));
  const running: ServiceChild = {
    label: spec.label,
    process: child,
    logs,
    exited,
    stop: (signal) => stopChild(child, exited, signal),
    restart: () => startChild(spec, sink),
  };
  try {
    await waitReady(spec, exited);
  } catch (error) {
    await running.stop('SIGKILL');
    throw error;
  }
  return running;
}

function launch(spec: ChildSpec): ChildProcess {
  const dir = path.join(ROOT, spec.folder);
  const entry =
    spec.entry === 'source'
      ? ['--import', 'tsx', path.join(dir, 'src/main.ts')]
      : ['--enable-source-maps', path.join(dir, 'dist/main.js')];
  if (spec.entry === 'bundle' && !existsSync(path.join(dir, 'dist/main.js')))
    throw new Error(`${spec.label}: no production bundle; run buildBundles() first`);
  return spawn(process.execPath, [...serviceNodeFlags(dir), ...spec.nodeFlags, ...entry], {
    cwd: ROOT,
    env: { ...process.env, ...spec.env },
    stdio: ['ignore', spec.logs === 'capture' ? 'pipe' : 2, 2],
  });
}

async function waitReady(spec: ChildSpec, exited: Promise<void>): Promise<void> {
  const deadline = Date.now() + READY_TIMEOUT_MS;
  let gone = false;
  void exited.then(() => {
    gone = true;
  });
  for (;;) {
    if (gone) throw new Error(`${spec.label} exited before it was ready`);
    try {
      const response = await fetch(spec.readyUrl, { signal: AbortSignal.timeout(2_000) });
      await response.body?.cancel();
      if (response.ok) return;
    } catch {
      // not listening yet
    }
    if (Date.now() > deadline) throw new Error(`${spec.label} was not ready within ${READY_TIMEOUT_MS} ms`);
    await new Promise((resolve) => setTimeout(resolve, 100));
  }
}

async function stopChild(child: ChildProcess, exited: Promise<void>, signal: NodeJS.Signals = 'SIGTERM') {
  if (child.exitCode !== null || child.signalCode !== null) return;
  child.kill(signal);
  // A child that ignores SIGTERM must not hold a test or a bench run forever.
  const timer = setTimeout(() => child.kill('SIGKILL'), 15_000);
  await exited;
  clearTimeout(timer);
}
