/** A reconciliation that stops half-way because the service is stopping; the next one resumes. */
export class SweepStopped extends Error {
  constructor() {
    super('the service is stopping');
  }
}

/**
 * Spaces one account's network reads: Meta allows about 2 calls per second per Page or
 * Instagram account on conversations (facts §4.2), and what a background sweep spends is taken
 * from what sends and lookups of the same account may use. Each call starts at least
 * 1 / callsPerSecond after the previous one started. Between calls it checks whether the service
 * is stopping, so a sweep never holds a shutdown for long.
 */
export class CallPacer {
  private nextAt = 0;
  /** Calls made so far (the reconciliation logs it). */
  calls = 0;

  constructor(
    private readonly callsPerSecond: number,
    private readonly stopping: () => boolean = () => false,
  ) {}

  async call<T>(read: () => Promise<T>): Promise<T> {
    const wait = this.nextAt - Date.now();
    if (wait > 0) await new Promise((resolve) => setTimeout(resolve, wait));
    if (this.stopping()) throw new SweepStopped();
    this.nextAt = Date.now() + 1000 / this.callsPerSecond;
    this.calls += 1;
    return read();
  }
}

/** Imports asked for by a person or an event read at once (they are one-off and bounded). */
export const UNPACED = { call: <T>(read: () => Promise<T>): Promise<T> => read() };

export type Pacer = Pick<CallPacer, 'call'>;
