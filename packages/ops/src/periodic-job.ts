import type { Logger } from '@svc/logging';

/**
 * A periodic job of one replica. The job itself must be safe with N replicas (idempotent, or
 * claiming rows with SKIP LOCKED); a failure is logged and the next tick tries again. A tick that
 * comes while the previous run is still going is skipped, so a slow job never runs twice at once.
 */
export class PeriodicJob {
  private timer: NodeJS.Timeout | undefined;
  private running: Promise<void> | undefined;

  constructor(
    readonly name: string,
    private readonly intervalMs: number,
    private readonly job: () => Promise<unknown>,
    private readonly logger: Logger,
  ) {}

  start(): NodeJS.Timeout {
    this.timer ??= setInterval(() => void this.run(), this.intervalMs);
    this.timer.unref();
    return this.timer;
  }

  /** No more ticks; a run in progress goes on (see finish). */
  cancel(): void {
    clearInterval(this.timer);
  }

  /** Waits for the run in progress, if any. */
  async finish(): Promise<void> {
    await this.running;
  }

  /** Runs the job now (unless it is running already) and resolves when that run is over. */
  run(): Promise<void> {
    this.running ??= this.job()
      .then(
        () => undefined,
        (err: unknown) => this.logger.warn({ err }, `${this.name} failed`),
      )
      .finally(() => {
        this.running = undefined;
      });
    return this.running;
  }
}
