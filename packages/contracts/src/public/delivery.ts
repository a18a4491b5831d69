import { z } from 'zod';
import { timestamp } from './shared.ts';

/** One delivery attempt of an event to the partner's webhook, defined once: webhooks builds it. */
export const deliveryAttemptView = z
  .object({
    id: z.string(),
    event_id: z.string(),
    number: z.number().int().describe('1 for the first attempt of the event'),
    url: z.string().describe('where it was sent'),
    attempted_at: timestamp,
    status_code: z.number().int().nullable().describe('null when no HTTP answer came back'),
    error: z.string().nullable().describe('why it failed; null on success'),
    latency_ms: z.number().int(),
    succeeded: z.boolean(),
  })
  .meta({ id: 'DeliveryAttempt' });

export type DeliveryAttemptView = z.infer<typeof deliveryAttemptView>;

const deliveryState = z.enum(['pending', 'delivered', 'undelivered']);

/** A page of an event's attempts, in the list envelope, with where its delivery stands. */
export const deliveryAttemptPageView = z.object({
  data: z.array(deliveryAttemptView),
  page: z.number().int(),
  limit: z.number().int(),
  total: z.number().int(),
  state: deliveryState.nullable().describe('null when the event was never scheduled (no webhook then)'),
  next_attempt_at: timestamp.nullable().describe('not before this time, while pending'),
});

export type DeliveryAttemptPageView = z.infer<typeof deliveryAttemptPageView>;

/** The answer to a redelivery: the event's delivery, pending again. */
export const redeliveryView = z.object({
  event_id: z.string(),
  state: deliveryState,
  next_attempt_at: timestamp,
});

export type RedeliveryView = z.infer<typeof redeliveryView>;
