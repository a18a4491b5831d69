import { randomBytes } from 'node:crypto';

/** A short unique prefix for NATS streams and Redis keys, so concurrent tests never share state. */
export function uniquePrefix(label = 't'): string {
  return `${label}${randomBytes(4).toString('hex')}`;
}

const STILL_CHECKING = Symbol('still checking');
type Checked<T> = { value: T | undefined } | { error: unknown } | typeof STILL_CHECKING;

/** How long after the deadline the check under way may still answer (at most). */
const LAST_CHECK_GRACE_MS = 10_000;

/**
 * Polls `check` every `intervalMs` until it returns a value other than undefined, or fails after
 * `timeoutMs`. The check under way at the deadline may still answer for a while (as long again,
 * 10 s at most); one that has not answered by then hangs, and fails here, saying so, rather than
 * as the test's timeout with nothing said.
 */
export async function eventually<T>(
  check: () => Promise<T | undefined> | T | undefined,
  timeoutMs = 10_000,
  intervalMs = 25,
): Promise<T> {
  const deadline = Date.now() + timeoutMs;
  const hungAt = deadline + Math.min(timeoutMs, LAST_CHECK_GRACE_MS);
  let lastError: unknown;
  while (Date.now() < deadline) {
    const checked = await checkBefore(hungAt, check);
    if (checked === STILL_CHECKING)
      throw new Error(`condition not met within ${timeoutMs} ms: its last check had not answered`, {
        cause: lastError,
      });
    if ('error' in checked) lastError = checked.error;
    else if (checked.value !== undefined) return checked.value;
    await new Promise((resolve) => setTimeout(resolve, intervalMs));
  }
  throw new Error(`condition not met within ${timeoutMs} ms`, { cause: lastError });
}

async function checkBefore<T>(
  hungAt: number,
  check: () => Promise<T | undefined> | T | undefined,
): Promise<Checked<T>> {
  let timer: NodeJS.Timeout | undefined;
  const late = new Promise<typeof STILL_CHECKING>((resolve) => {
    timer = setTimeout(() => resolve(STILL_CHECKING), Math.max(0, hungAt - Date.now()));
  });
  const answered = Promise.resolve()
    .then(check)
    .then(
      (value) => ({ value }),
      (error: unknown) => ({ error }),
    );
  try {
    return await Promise.race([answered, late]);
  } finally {
    clearTimeout(timer);
  }
}
