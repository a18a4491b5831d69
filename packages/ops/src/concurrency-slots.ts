import { ServiceError } from '@svc/errors';

export interface SlotBounds {
  /** What is being bounded, in the plural, for the refusal ("media uploads"). */
  what: string;
  /** At most this many at once per key (a partner)... */
  perKey: number;
  /** ...and this many at once in the process. */
  total: number;
  /** What a client is told to wait before retrying. */
  retryAfterSeconds: number;
}

/**
 * How many of a costly kind of work (an upload held in memory, say) this process runs at once,
 * per key and in all, so a burst from one partner cannot take the memory or the slots the others
 * need. Work over a bound is refused at once with `rate_limited` (and a retry time) rather than
 * queued: nothing piles up here while the client waits to retry.
 */
export class ConcurrencySlots {
  private total = 0;
  private readonly byKey = new Map<string, number>();

  constructor(private readonly bounds: SlotBounds) {}

  async run<T>(key: string, task: () => Promise<T>): Promise<T> {
    const release = this.claim(key);
    try {
      return await task();
    } finally {
      release();
    }
  }

  /**
   * Takes a slot for work that does not fit one function (a request read in one hook and answered
   * later); the returned release frees it, once however often it is called.
   */
  claim(key: string): () => void {
    const { perKey, total } = this.bounds;
    const mine = this.byKey.get(key) ?? 0;
    if (mine >= perKey) throw this.busy(`at most ${perKey} per partner are handled at the same time`);
    if (this.total >= total) throw this.busy(`the service handles at most ${total} at the same time`);
    this.byKey.set(key, mine + 1);
    this.total++;
    let held = true;
    return () => {
      if (!held) return;
      held = false;
      this.release(key);
    };
  }

  private release(key: string): void {
    const mine = (this.byKey.get(key) ?? 1) - 1;
    if (mine > 0) this.byKey.set(key, mine);
    else this.byKey.delete(key);
    this.total--;
  }

  private busy(bound: string): ServiceError {
    const seconds = this.bounds.retryAfterSeconds;
    return new ServiceError(
      'rate_limited',
      `too many ${this.bounds.what} at once: ${bound}; retry after ${seconds} s`,
      {
        retryAfterSeconds: seconds,
      },
    );
  }
}
