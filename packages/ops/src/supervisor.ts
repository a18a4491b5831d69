import { type ChildProcess, spawn } from 'node:child_process';

/** One process to keep running. */
export interface Supervised {
  name: string;
  command: string;
  args: string[];
  cwd?: string;
  env?: NodeJS.ProcessEnv;
  /**
   * When it stops: `first` (the gateway: nothing new comes in while the services it calls, and
   * writes its last request logs to, still answer), with the rest by default, or `last` (the
   * graph-sandbox: work in flight still reaches it).
   */
  stop?: 'first' | 'last';
}

const STOP_STAGES = ['first', undefined, 'last'] as const;

export interface SupervisorOptions {
  /** Where the supervisor's own lines go (a death, a restart). */
  log: (line: string) => void;
  /** First wait before a restart; doubles on each death, up to `maxDelayMs`. */
  firstDelayMs?: number;
  maxDelayMs?: number;
  /** A process that ran this long before dying is restarted after `firstDelayMs` again. */
  stableMs?: number;
  /** How long a process may take to stop on SIGTERM before it gets SIGKILL. */
  stopGraceMs?: number;
}

interface Running {
  spec: Supervised;
  child?: ChildProcess;
  startedAt: number;
  delayMs: number;
  restarts: number;
  timer?: NodeJS.Timeout;
}

/**
 * `pnpm start`'s process supervisor. A process that dies is restarted with backoff (1 s doubling
 * to 30 s, back to 1 s once it had run a stable minute), with a line saying which one died, how,
 * and when it comes back; the others are left alone, since one service's death is not everyone's.
 * Only `stop()` (Ctrl-C, SIGTERM) stops them all, in stages (see `Supervised.stop`): the edge,
 * then the services, then what they call. Each process has a process group of its own, so a
 * Ctrl-C in the terminal (sent to the whole foreground group) reaches the supervisor alone, which
 * then stops them in that order.
 */
export class Supervisor {
  private readonly running = new Map<string, Running>();
  private stopping = false;

  constructor(private readonly options: SupervisorOptions) {}

  start(specs: Supervised[]): void {
    for (const spec of specs) {
      const state: Running = { spec, startedAt: 0, delayMs: this.firstDelay, restarts: 0 };
      this.running.set(spec.name, state);
      this.launch(state);
    }
  }

  /** The current process id of a supervised process (undefined while it waits for a restart). */
  pid(name: string): number | undefined {
    return this.running.get(name)?.child?.pid;
  }

  restarts(name: string): number {
    return this.running.get(name)?.restarts ?? 0;
  }

  /** Stops every process, stage by stage; resolves once all exited. */
  async stop(): Promise<void> {
    this.stopping = true;
    const all = [...this.running.values()];
    for (const state of all) clearTimeout(state.timer);
    for (const stage of STOP_STAGES)
      await Promise.all(all.filter((s) => s.spec.stop === stage).map((s) => this.terminate(s)));
  }

  private get firstDelay(): number {
    return this.options.firstDelayMs ?? 1_000;
  }

  private launch(state: Running): void {
    const { spec } = state;
    const child = spawn(spec.command, spec.args, {
      cwd: spec.cwd,
      env: spec.env,
      stdio: 'inherit',
      detached: true,
    });
    state.child = child;
    state.startedAt = Date.now();
    child.once('exit', (code, signal) => {
      state.child = undefined;
      if (!this.stopping) this.scheduleRestart(state, signal ?? `exit code ${code}`);
    });
  }

  private scheduleRestart(state: Running, how: string): void {
    const { stableMs = 60_000, maxDelayMs = 30_000 } = this.options;
    if (Date.now() - state.startedAt >= stableMs) state.delayMs = this.firstDelay;
    const delay = state.delayMs;
    const at = new Date(Date.now() + delay).toISOString().slice(11, 19);
    this.options.log(`✗ ${state.spec.name} died (${how}); restarting in ${delay / 1000} s (at ${at} UTC)`);
    state.delayMs = Math.min(delay * 2, maxDelayMs);
    state.timer = setTimeout(() => {
      if (this.stopping) return;
      state.restarts++;
      this.launch(state);
      this.options.log(`↻ ${state.spec.name} restarted (restart ${state.restarts})`);
    }, delay);
  }

  private terminate(state: Running): Promise<void> {
    const { child } = state;
    if (!child || child.exitCode !== null || child.signalCode !== null) return Promise.resolve();
    return new Promise((resolve) => {
      const kill = setTimeout(() => child.kill('SIGKILL'), this.options.stopGraceMs ?? 15_000);
      child.once('exit', () => {
        clearTimeout(kill);
        resolve();
      });
      child.kill('SIGTERM');
    });
  }
}
