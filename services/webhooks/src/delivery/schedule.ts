/**
 * The retry schedule of spec section 6 (rule 2): attempt 1 at once, then 1 min, 5 min, 30 min,
 * 2 h and 12 h, each counted from the previous failed attempt (about 14.6 h in all). After the
 * sixth failure the event is undelivered and never sent again.
 */
export const ATTEMPT_DELAYS_MS = [0, 60_000, 300_000, 1_800_000, 7_200_000, 43_200_000] as const;

export const MAX_ATTEMPTS = ATTEMPT_DELAYS_MS.length;

/** The whole span of the schedule, from the first attempt to the last: retention keeps events longer. */
export const RETRY_HORIZON_MS = ATTEMPT_DELAYS_MS.reduce((sum: number, ms) => sum + ms, 0);

/**
 * When to try again after a failed attempt, or null when no attempt is left (undelivered).
 * `attemptsMade` counts every attempt of the event, the one that just failed included;
 * `maxAttempts` is 6 for the schedule (a manual redelivery allows one attempt more than were made).
 */
export function nextAttemptAfterFailure(
  attemptsMade: number,
  maxAttempts: number,
  failedAt: Date,
): Date | null {
  if (attemptsMade >= maxAttempts) return null;
  const delay = ATTEMPT_DELAYS_MS[Math.min(attemptsMade, MAX_ATTEMPTS - 1)] ?? 0;
  return new Date(failedAt.getTime() + delay);
}
