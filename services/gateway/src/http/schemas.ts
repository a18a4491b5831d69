import { type IdKind, isId } from '@svc/ids';
import { z } from 'zod';

/** Shared request and response pieces, so every list pages and every id is checked the same way. */
export const pagination = {
  page: z.coerce.number().int().min(1).max(1_000_000).default(1).describe('page number, from 1'),
  limit: z.coerce.number().int().min(1).max(200).default(50).describe('items per page, 1-200'),
};

export const pageQuery = z.strictObject(pagination);

/** A body or query field that must name an object: a malformed id is a 400 naming the field. */
export function idField(kind: IdKind, description: string) {
  return z
    .string()
    .refine((value) => isId(kind, value), { message: `not a valid ${description} id` })
    .describe(`${description} id`);
}

/**
 * An id in the path. Ids are opaque to partners (spec 2): one that cannot exist is answered like
 * one that does not, 404 with the owning service's wording (`<what> not found`, see `parseInput`),
 * and never reaches a service, so no service sees junk (NUL bytes, path tricks) in a lookup.
 */
export function pathId(kind: IdKind, what: string) {
  return z
    .string()
    .refine((value) => isId(kind, value), { message: `${what} not found` })
    .describe(`${what} id`);
}

export function paged<T extends z.ZodType>(item: T) {
  return z.object({
    data: z.array(item),
    page: z.number().int(),
    limit: z.number().int(),
    total: z.number().int(),
  });
}

export { timestamp } from '@svc/contracts/public';

/** The query flags, by schema: the MCP door offers each as a JSON boolean instead. */
export const queryFlags = z.registry<{ description: string }>();

/** A query flag: `true`/`false` (also 1/0), never JavaScript truthiness ("false" is false). */
export function queryFlag(description: string) {
  const flag = z
    .enum(['true', 'false', '1', '0'])
    .transform((v) => v === 'true' || v === '1')
    .optional()
    .describe(description);
  queryFlags.add(flag, { description });
  return flag;
}
