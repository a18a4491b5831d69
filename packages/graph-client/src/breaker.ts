/** When the breaker opens, and how long it stays open (doubling while Meta stays down). */
export interface BreakerPolicy {
  /** Failures in a row (5xx, timeouts, no answer) that open it. */
  failures: number;
  cooldownMs: number;
  maxCooldownMs: number;
}

export const DEFAULT_BREAKER: BreakerPolicy = { failures: 5, cooldownMs: 5_000, maxCooldownMs: 60_000 };

/**
 * One app's circuit breaker for a Meta outage. After `failures` answers in a row that say Meta
 * is down, calls are refused at once (callers defer their work) until the cooldown passes; then
 * one call goes through as a probe: its success closes the breaker, its failure opens it again
 * for twice as long, up to `maxCooldownMs`.
 */
export class OutageBreaker {
  private failuresInRow = 0;
  private openUntil = 0;
  private cooldownMs: number;
  private probing = false;

  constructor(private readonly policy: BreakerPolicy = DEFAULT_BREAKER) {
    this.cooldownMs = policy.cooldownMs;
  }

  /** Whether a call may go now (`probe`: the one trial after a cooldown), or when to try again. */
  admit(now: number): { probe: boolean } | { retryAt: number } {
    if (this.failuresInRow < this.policy.failures) return { probe: false };
    if (now < this.openUntil) return { retryAt: this.openUntil };
    // The probe is in flight: the others try again shortly after it answers.
    if (this.probing) return { retryAt: now + 1_000 };
    this.probing = true;
    return { probe: true };
  }

  succeeded(): void {
    this.failuresInRow = 0;
    this.probing = false;
    this.cooldownMs = this.policy.cooldownMs;
  }

  failed(now: number, probe: boolean): void {
    this.failuresInRow += 1;
    if (probe) this.cooldownMs = Math.min(this.policy.maxCooldownMs, this.cooldownMs * 2);
    this.probing = false;
    if (this.failuresInRow >= this.policy.failures) this.openUntil = now + this.cooldownMs;
  }

  get open(): boolean {
    return this.failuresInRow >= this.policy.failures;
  }
}
