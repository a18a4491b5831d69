import { z } from 'zod';

/**
 * The envelope of every webhook body Meta sends (facts §5): the `object` it is about (`page`,
 * `instagram`, `permissions`, `user`) and its entries, each naming the Page, profile or user by
 * `id`, with `messaging[]` items or `changes[]`. Read leniently: fields we do not know are kept,
 * and what an entry carries is read by the service it concerns.
 */
const webhookBody = z.looseObject({
  object: z.string(),
  entry: z.array(
    z.looseObject({
      id: z.coerce.string().min(1),
      time: z.number().optional(),
      messaging: z.array(z.unknown()).optional(),
      changes: z.array(z.unknown()).optional(),
    }),
  ),
});

export type MetaWebhookBody = z.infer<typeof webhookBody>;

/** The body as Meta sent it (the raw text), or why it is not a webhook body: never throws. */
export function readWebhookBody(text: string): { body: MetaWebhookBody } | { unreadable: string } {
  let payload: unknown;
  try {
    payload = JSON.parse(text);
  } catch {
    return { unreadable: 'the body is not JSON' };
  }
  const parsed = webhookBody.safeParse(payload);
  if (parsed.success) return { body: parsed.data };
  const issues = parsed.error.issues.map((i) => `${i.path.join('.') || '(root)'} ${i.message}`).join('; ');
  return { unreadable: `not a webhook body: ${issues}` };
}
