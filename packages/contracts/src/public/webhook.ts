import { z } from 'zod';
import { timestamp } from './shared.ts';

/** The partner's webhook configuration as it sees it, defined once: webhooks builds it (never the secret). */
export const webhookView = z
  .object({
    url: z.string().describe('where events are POSTed'),
    created: timestamp,
    updated: timestamp,
  })
  .meta({ id: 'Webhook' });

export type WebhookView = z.infer<typeof webhookView>;

/** The answer to setting the webhook: the only one that may carry the signing secret. */
export const putWebhookView = webhookView.extend({
  secret: z
    .string()
    .optional()
    .describe('the signing secret (whsec_…): shown once, when created or rotated; store it safely'),
});

export type PutWebhookView = z.infer<typeof putWebhookView>;
