import { ServiceError } from '@svc/errors';
import type { Redis } from 'ioredis';

/**
 * Runs a script defined with `defineCommand`. Without Redis the gateway fails closed (503): it
 * can neither check keys and limits nor keep idempotency records, and guessing would be unsafe.
 */
export async function runScript(
  redis: Redis,
  command: string,
  args: (string | number)[],
  unavailable: string,
): Promise<unknown> {
  try {
    return await (redis as unknown as Record<string, (...a: (string | number)[]) => Promise<unknown>>)[
      command
    ]?.(...args);
  } catch (error) {
    throw new ServiceError('service_unavailable', unavailable, { cause: error });
  }
}
