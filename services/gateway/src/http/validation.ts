import { ServiceError } from '@svc/errors';
import type { z } from 'zod';

/**
 * Validates one part of a request. Refusals name the offending field: the path of the first
 * issue (`settings.theme`), the unknown key itself, or the part (`body`) when the whole is wrong.
 * The path holds only ids (`pathId`): a path that fails names nothing, so it is not found.
 */
export function parseInput<T>(
  schema: z.ZodType<T> | undefined,
  value: unknown,
  part: 'path' | 'query' | 'body',
): T {
  if (!schema) return {} as T;
  const result = schema.safeParse(value);
  if (result.success) return result.data;
  const issue = result.error.issues[0];
  if (part === 'path') throw new ServiceError('not_found', issue?.message ?? 'not found');
  if (!issue) throw new ServiceError('validation_error', `invalid ${part}`, { field: part });
  if (issue.code === 'unrecognized_keys') {
    const key = [...issue.path, issue.keys[0]].join('.');
    throw new ServiceError('validation_error', `unknown field "${key}"`, { field: key });
  }
  const field = issue.path.length > 0 ? issue.path.join('.') : part;
  throw new ServiceError('validation_error', `${field}: ${issue.message}`, { field });
}
