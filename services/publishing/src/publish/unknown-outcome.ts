/**
 * A publish call that timed out or was cut off may still complete at the network a little later
 * (and be live). Before concluding it did not go through, ask again for a while, backing off:
 * failing it too early would let a re-publish post it a second time.
 */
const GRACE_MS = 2 * 60_000;
const FIRST_DELAY_MS = 200;
const MAX_DELAY_MS = 5_000;

export async function askUntilSettled<T>(
  check: () => Promise<T | null>,
  graceMs = GRACE_MS,
): Promise<T | null> {
  const deadline = Date.now() + graceMs;
  let delay = FIRST_DELAY_MS;
  for (;;) {
    const found = await check();
    if (found || Date.now() + delay > deadline) return found;
    await new Promise((resolve) => setTimeout(resolve, delay));
    delay = Math.min(delay * 2, MAX_DELAY_MS);
  }
}
