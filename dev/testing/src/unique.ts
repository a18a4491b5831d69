import { randomBytes } from 'node:crypto';

/** A short unique prefix for NATS streams and Redis keys, so concurrent tests never share state. */
export function uniquePrefix(label = 't'): string {
  return `${label}${randomBytes(4).toString('hex')}`;
}

/** Polls `check` until it returns a value other than undefined, or fails after `timeoutMs`. */
export async function eventually<T>(
  check: () => Promise<T | undefined> | T | undefined,
  timeoutMs = 10_000,
): Promise<T> {
  const deadline = Date.now() + timeoutMs;
  let lastError: unknown;
  while (Date.now() < deadline) {
    try {
      const value = await check();
      if (value !== undefined) return value;
    } catch (error) {
      lastError = error;
    }
    await new Promise((resolve) => setTimeout(resolve, 25));
  }
  throw new Error(`condition not met within ${timeoutMs} ms`, { cause: lastError });
}
