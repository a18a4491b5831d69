import { ServiceError } from '@svc/errors';
import type { z } from 'zod';

/**
 * Validates one part of a request. Refusals name the offending field: the path of the first
 * issue (`settings.theme`), the unknown key itself, or the part (`body`) when the whole is wrong.
 * The path holds only ids (`pathId`): a path that fails names nothing, so it is not found.
 * A query or body that fits its schema is then refused if no service could store it.
 */
export function parseInput<T>(
  schema: z.ZodType<T> | undefined,
  value: unknown,
  part: 'path' | 'query' | 'body',
): T {
  if (!schema) return {} as T;
  const result = schema.safeParse(value);
  if (result.success) {
    if (part !== 'path') refuseUnstorable(result.data, part);
    return result.data;
  }
  const issue = result.error.issues[0];
  if (part === 'path') throw new ServiceError('not_found', issue?.message ?? 'not found');
  if (!issue) throw new ServiceError('validation_error', `invalid ${part}`, { field: part });
  // A key can be empty (`?=1`, `{"":1}`): then the part names the field, never an empty string.
  if (issue.code === 'unrecognized_keys') {
    const key = [...issue.path, issue.keys[0]].join('.');
    throw new ServiceError('validation_error', `unknown field "${key}"`, { field: key || part });
  }
  const field = issue.path.join('.') || part;
  throw new ServiceError('validation_error', `${field}: ${issue.message}`, { field });
}

/**
 * How deep a body may nest. Free-form fields (a workspace's `settings`, a post's `options`) are
 * stored as JSON by Prisma, whose reader stops at 128 levels and failed the request with a 500
 * past it (found by test/fuzz.test.ts); 64 leaves room for what wraps the value on the way.
 */
const MAX_DEPTH = 64;

/**
 * Refuses what no service can store, naming where it is: a NUL character (U+0000) or a lone
 * surrogate (half of a UTF-16 pair, which jsonb refuses as `\ud800`) in any string or key, which
 * Postgres cannot hold (a 500 from the service that tried, found by test/fuzz.test.ts), and a
 * value nested deeper than MAX_DEPTH. Also checked on a whole MCP message before the SDK reads it.
 */
export function refuseUnstorable(input: unknown, part: 'query' | 'body'): void {
  // Iterative, depth-first: walking a deep value must not itself overflow the stack.
  const pending: [value: unknown, path: string[]][] = [[input, []]];
  for (let next = pending.pop(); next; next = pending.pop()) {
    const [value, path] = next;
    const field = () => path.join('.') || part;
    if (typeof value === 'string') {
      if (!storableText(value)) throw holdsUnstorable(field());
      continue;
    }
    if (!isContainer(value)) continue;
    if (path.length >= MAX_DEPTH) {
      // An empty top key (`{"": …}`) is named by the part, never by an empty string.
      const top = path[0] || part;
      throw new ServiceError('validation_error', `${top} is nested deeper than ${MAX_DEPTH} levels`, {
        field: top,
      });
    }
    for (const [key, child] of Object.entries(value)) {
      if (!storableText(key)) throw holdsUnstorable(field());
      pending.push([child, [...path, key]]);
    }
  }
}

const storableText = (text: string) => !text.includes('\u0000') && text.isWellFormed();

const holdsUnstorable = (field: string) =>
  new ServiceError(
    'validation_error',
    `${field} contains a NUL character (U+0000) or a lone surrogate (not valid Unicode)`,
    { field },
  );

/** Arrays and plain objects (what JSON and query parsing make), not buffers or class instances. */
function isContainer(value: unknown): value is object {
  if (Array.isArray(value)) return true;
  if (typeof value !== 'object' || value === null) return false;
  const prototype = Object.getPrototypeOf(value);
  return prototype === Object.prototype || prototype === null;
}
