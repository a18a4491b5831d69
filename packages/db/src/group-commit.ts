interface Waiting<T> {
  item: T;
  resolve(): void;
  reject(error: unknown): void;
}

/**
 * Group commit: items added while a batch is being written gather and go in the next one, one
 * writer at a time, at most `maxBatch` a statement. At a low rate an item is written alone almost
 * at once (after `gatherMs`, 0 by default: the next microtask); under load one statement carries
 * many, which is what lets a service keep up with thousands of writes a second. Each caller waits
 * for its own item to be written, and sees the error of the batch it was in.
 *
 * `busyGatherMs`: while items come on average less than this far apart (a moving average of
 * their last few intervals: sustained load, not two items of one request), the writer
 * waits that long for more before writing, so a moderate rate fills batches too, where each item
 * would otherwise find the writer free and go alone. At a lower rate an item is written at once.
 */
export class GroupCommit<T> {
  private waiting: Waiting<T>[] = [];
  private writing: Promise<void> | undefined;
  private lastAddAt = Number.NEGATIVE_INFINITY;
  /** Moving average of the time between two items, in ms, each counted at most 100 ms. */
  private interval = 100;

  constructor(
    private readonly write: (batch: T[]) => Promise<void>,
    private readonly options: { maxBatch?: number; gatherMs?: number; busyGatherMs?: number } = {},
  ) {}

  /** How many items wait for a batch (for callers that hold back while a full one waits). */
  get backlog(): number {
    return this.waiting.length;
  }

  add(item: T): Promise<void> {
    const now = performance.now();
    this.interval = this.interval * 0.75 + Math.min(now - this.lastAddAt, 100) * 0.25;
    this.lastAddAt = now;
    return new Promise<void>((resolve, reject) => {
      this.waiting.push({ item, resolve, reject });
      this.writeWaiting();
    });
  }

  addAll(items: T[]): Promise<void> {
    return Promise.all(items.map((item) => this.add(item))).then(() => {});
  }

  /** Resolves once nothing is being written (every item added so far is written or failed). */
  async idle(): Promise<void> {
    while (this.writing) await this.writing;
  }

  private writeWaiting(): void {
    this.writing ??= (async () => {
      const { maxBatch = Number.POSITIVE_INFINITY, busyGatherMs = 0 } = this.options;
      const busy = this.interval < busyGatherMs;
      const gatherMs = Math.max(this.options.gatherMs ?? 0, busy ? busyGatherMs : 0);
      // Always after the assignment above, so that the reset below sticks.
      await (gatherMs > 0 ? new Promise((resolve) => setTimeout(resolve, gatherMs)) : Promise.resolve());
      while (this.waiting.length > 0) {
        const batch = this.waiting.splice(0, maxBatch);
        try {
          await this.write(batch.map((w) => w.item));
          for (const w of batch) w.resolve();
        } catch (error) {
          for (const w of batch) w.reject(error);
        }
      }
      this.writing = undefined; // in the same step as the emptiness check: no item slips between
    })();
  }
}
