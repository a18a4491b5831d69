/**
 * At most `size` tasks run at once; the others wait their turn, first come first served. Bounds
 * work whose cost is memory rather than time (image decodes), where a burst must queue, not
 * pile up.
 */
export class Semaphore {
  private running = 0;
  private readonly waiting: (() => void)[] = [];

  constructor(readonly size: number) {
    if (!Number.isInteger(size) || size < 1)
      throw new Error(`a semaphore needs a size of 1 or more, not ${size}`);
  }

  async run<T>(task: () => Promise<T>): Promise<T> {
    await this.acquire();
    try {
      return await task();
    } finally {
      this.release();
    }
  }

  private acquire(): Promise<void> {
    if (this.running < this.size) {
      this.running++;
      return Promise.resolve();
    }
    return new Promise((resolve) => this.waiting.push(resolve));
  }

  /** The slot passes straight to the next waiting task, so a newcomer cannot overtake it. */
  private release(): void {
    const next = this.waiting.shift();
    if (next) next();
    else this.running--;
  }
}
