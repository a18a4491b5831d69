import { EventEmitter } from 'node:events';

/**
 * One deadline over a whole outbound exchange (connect, headers, body), for undici's `request`:
 * undici takes any EventEmitter that emits 'abort' as its signal, which costs far less per request
 * than an AbortController. `clear()` it when the exchange ends: unlike `AbortSignal.timeout`, no
 * timer outlives its request (each of those fired long after and built a DOMException, a visible
 * share of a busy publish worker's CPU).
 */
export class Deadline {
  readonly signal = new EventEmitter();
  private timedOut = false;
  private readonly timer: NodeJS.Timeout;

  constructor(readonly ms: number) {
    this.timer = setTimeout(() => {
      this.timedOut = true;
      this.signal.emit('abort');
    }, ms);
  }

  /** Whether the exchange was cut off by this deadline (rather than failing on its own). */
  get expired(): boolean {
    return this.timedOut;
  }

  clear(): void {
    clearTimeout(this.timer);
  }
}
