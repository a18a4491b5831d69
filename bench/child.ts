// Shared by the bench's child processes (bare Fastify, minimal path, product stack) and the runner:
// a child announces readiness with one JSON line on stdout and stops cleanly on SIGTERM/SIGINT.
import { type ChildProcess, spawn } from 'node:child_process';
import path from 'node:path';
import { createInterface } from 'node:readline';

export const ROOT = path.resolve(import.meta.dirname, '..');

/** What a child prints on stdout (one JSON line) once it can take traffic. */
export interface Ready {
  ready: true;
  /** Base URL of the HTTP server under test. */
  url: string;
  /** The path autocannon drives. */
  path: string;
  /** Sent as `Authorization: Bearer <token>` when set. */
  token?: string;
  /** How the servers of this target are laid out, for the printed table. */
  processes: string;
}

/** In a child: print the ready line. Logs must go to stderr so stdout carries only this. */
export function announce(ready: Omit<Ready, 'ready'>): void {
  process.stdout.write(`${JSON.stringify({ ready: true, ...ready })}\n`);
}

/** In a child: run `stop` once on SIGTERM/SIGINT, then exit. */
export function onShutdown(stop: () => Promise<void>): void {
  let stopping = false;
  for (const signal of ['SIGINT', 'SIGTERM'] as const) {
    process.on(signal, () => {
      if (stopping) return;
      stopping = true;
      stop()
        .catch((error: unknown) => process.stderr.write(`stop failed: ${String(error)}\n`))
        .finally(() => process.exit(0));
    });
  }
}

/** In a runner: on Ctrl-C or SIGTERM, run `cleanup` (services, database, streams) before exiting. */
export function cleanUpOnInterrupt(cleanup: () => Promise<void>): void {
  for (const signal of ['SIGINT', 'SIGTERM'] as const) {
    process.once(signal, () => {
      process.stderr.write(`\n${signal}: cleaning up\n`);
      void cleanup().finally(() => process.exit(130));
    });
  }
}

export interface Child {
  name: string;
  process: ChildProcess;
  ready: Ready;
  stop(): Promise<void>;
}

/**
 * Starts `bench/<file>` in its own Node process (through tsx's loader, no extra wrapper process) and
 * waits for its ready line. Extra Node flags (e.g. --cpu-prof) go in `nodeFlags`.
 */
export async function startChild(
  name: string,
  file: string,
  env: Record<string, string>,
  nodeFlags: string[] = [],
  timeoutMs = 60_000,
): Promise<Child> {
  const child = spawn(process.execPath, ['--import', 'tsx', ...nodeFlags, path.join(ROOT, 'bench', file)], {
    cwd: ROOT,
    env: { ...process.env, ...env },
    stdio: ['ignore', 'pipe', 'inherit'],
  });
  const exited = new Promise<void>((resolve) => child.once('exit', () => resolve()));
  const stop = async () => {
    if (child.exitCode !== null || child.signalCode !== null) return;
    child.kill('SIGTERM');
    const timer = setTimeout(() => child.kill('SIGKILL'), 15_000);
    await exited;
    clearTimeout(timer);
  };
  const stdout = child.stdout;
  if (!stdout) throw new Error(`${name}: no stdout`);
  const lines = createInterface({ input: stdout });
  try {
    const ready = await new Promise<Ready>((resolve, reject) => {
      const timer = setTimeout(
        () => reject(new Error(`${name} was not ready within ${timeoutMs} ms`)),
        timeoutMs,
      );
      child.once('exit', (code, signal) => {
        clearTimeout(timer);
        reject(new Error(`${name} exited before it was ready (code ${code}, signal ${signal})`));
      });
      lines.on('line', (line) => {
        const parsed = parseReady(line);
        if (parsed) {
          clearTimeout(timer);
          resolve(parsed);
        } else {
          process.stderr.write(`[${name}] ${line}\n`);
        }
      });
    });
    return { name, process: child, ready, stop };
  } catch (error) {
    await stop();
    throw error;
  }
}

function parseReady(line: string): Ready | undefined {
  if (!line.startsWith('{')) return undefined;
  try {
    const value = JSON.parse(line) as Partial<Ready>;
    if (value.ready === true && typeof value.url === 'string' && typeof value.path === 'string') {
      return value as Ready;
    }
  } catch {
    // not our line
  }
  return undefined;
}

/**
 * The bench's environment variables, read in one place. (They belong to a script, not to a turbo
 * task, so they are read by name here rather than declared in turbo.json.)
 */
export function envVar(name: string, fallback: string): string {
  return process.env[name] || fallback;
}

/** A required environment variable of a child. */
export function requireEnv(name: string): string {
  const value = envVar(name, '');
  if (!value) throw new Error(`${name} is not set (the bench runner sets it)`);
  return value;
}
