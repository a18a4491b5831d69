/** How a poll backs off: the first wait, the longest wait, and how long it may go on in all. */
export interface Backoff {
  firstDelayMs: number;
  maxDelayMs: number;
  deadlineMs: number;
}

/**
 * Asks `check` until it answers (anything but null), waiting between tries twice as long as the
 * time before, up to `maxDelayMs`: a remote side that is almost done is asked again soon, one that
 * is slow is not hammered. Gives up with null once the next wait would end past the deadline, so
 * the caller learns "not yet" in time to say so. A `check` that throws ends the poll.
 */
export async function pollWithBackoff<T>(
  check: () => Promise<T | null>,
  backoff: Backoff,
): Promise<T | null> {
  const deadline = Date.now() + backoff.deadlineMs;
  let delay = backoff.firstDelayMs;
  for (;;) {
    const answer = await check();
    if (answer !== null || Date.now() + delay > deadline) return answer;
    await new Promise((resolve) => setTimeout(resolve, delay));
    delay = Math.min(delay * 2, backoff.maxDelayMs);
  }
}
