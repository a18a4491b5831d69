import { z } from '@svc/config';

/** Body parts that several control routes accept alike. */

/** Who writes: a known person by id, or a new one by username (Instagram) or name (Messenger). */
export const personBody = z
  .object({
    id: z.string().regex(/^\d+$/).optional(),
    username: z.string().min(1).optional(),
    name: z.string().min(1).optional(),
  })
  .default({});

/** The new text of an edited message or comment. */
export const editBody = z.object({ text: z.string().min(1) });
