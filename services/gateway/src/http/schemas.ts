import { type IdKind, isId } from '@svc/ids';
import { z } from 'zod';

/** Shared request and response pieces, so every list pages and every id is checked the same way. */
export const pagination = {
  page: z.coerce.number().int().min(1).max(1_000_000).default(1).describe('page number, from 1'),
  limit: z.coerce.number().int().min(1).max(200).default(50).describe('items per page, 1-200'),
};

export const pageQuery = z.strictObject(pagination);

export function idParam(kind: IdKind, description: string) {
  return z
    .string()
    .refine((value) => isId(kind, value), { message: `not a valid ${description} id` })
    .describe(`${description} id`);
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

/** A query flag: `true`/`false` (also 1/0), never JavaScript truthiness ("false" is false). */
export const queryBoolean = z
  .enum(['true', 'false', '1', '0'])
  .transform((v) => v === 'true' || v === '1')
  .optional();
