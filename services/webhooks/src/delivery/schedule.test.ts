import { describe, expect, it } from 'vitest';
import { ATTEMPT_DELAYS_MS, MAX_ATTEMPTS, nextAttemptAfterFailure, RETRY_HORIZON_MS } from './schedule.ts';

const MINUTE = 60_000;

describe('retry schedule', () => {
  // Guarantee: the spec's delays (1 min, 5 min, 30 min, 2 h, 12 h), counted from the failed attempt.
  it('waits the spec delay after each failure, counted from that failure', () => {
    const failedAt = new Date('2030-01-01T00:00:00Z');
    const waits = [1, 2, 3, 4, 5].map(
      (made) => (nextAttemptAfterFailure(made, MAX_ATTEMPTS, failedAt)?.getTime() ?? 0) - failedAt.getTime(),
    );
    expect(waits).toEqual([MINUTE, 5 * MINUTE, 30 * MINUTE, 120 * MINUTE, 720 * MINUTE]);
    expect(ATTEMPT_DELAYS_MS[0]).toBe(0);
  });

  // Guarantee: six attempts at most; after the sixth failure nothing more is scheduled.
  it('schedules nothing after the sixth failure', () => {
    expect(MAX_ATTEMPTS).toBe(6);
    expect(nextAttemptAfterFailure(6, MAX_ATTEMPTS, new Date())).toBeNull();
    expect(nextAttemptAfterFailure(7, MAX_ATTEMPTS, new Date())).toBeNull();
  });

  // Guarantee: a manual redelivery (one attempt more than were made) ends after that one attempt.
  it('gives a redelivery exactly one attempt', () => {
    expect(nextAttemptAfterFailure(7, 7, new Date())).toBeNull();
    expect(nextAttemptAfterFailure(1, 1, new Date())).toBeNull();
  });

  // Guarantee: the whole schedule spans about 14.6 hours (what retention must exceed).
  it('spans 876 minutes', () => {
    expect(RETRY_HORIZON_MS).toBe(876 * MINUTE);
  });
});
