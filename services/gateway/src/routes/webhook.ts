import type { Webhook } from '@svc/contracts';
import { z } from 'zod';
import type { WebhooksClient } from '../clients.ts';
import { type AnyRoute, defineRoute } from '../http/route.ts';
import { timestamp } from '../http/schemas.ts';
import { attemptView, toAttemptView } from './events.ts';

const webhookView = z
  .object({
    url: z.string().describe('where events are POSTed'),
    created: timestamp,
    updated: timestamp,
  })
  .meta({ id: 'Webhook' });

function toWebhookView(w: Webhook): z.infer<typeof webhookView> {
  return { url: w.url, created: w.createdAt, updated: w.updatedAt };
}

// The test ping waits for its attempt, which may run into the delivery deadline (10 s by default).
const TEST_DEADLINE_MS = 25_000;

export function webhookRoutes(webhooks: WebhooksClient): AnyRoute[] {
  return [
    defineRoute({
      method: 'PUT',
      url: '/v1/webhook',
      summary:
        'Set the webhook (one per partner); the signing secret is in this response only when created or rotated',
      permission: 'partnerOnly',
      body: z.strictObject({
        url: z.string().min(1).max(2048).describe('https URL (http only to loopback in development)'),
        rotate_secret: z
          .boolean()
          .default(false)
          .describe('issue a new signing secret; the old one stops at once'),
      }),
      status: 200,
      response: webhookView.extend({
        secret: z
          .string()
          .optional()
          .describe('the signing secret (whsec_…): shown once, when created or rotated; store it safely'),
      }),
      async handler({ principal, body }) {
        const { webhook, secret } = await webhooks.putWebhook({
          partnerId: principal.partnerId,
          partnerSlug: principal.partnerSlug,
          url: body.url,
          rotateSecret: body.rotate_secret,
        });
        return { ...toWebhookView(webhook as Webhook), ...(secret ? { secret } : {}) };
      },
    }),
    defineRoute({
      method: 'GET',
      url: '/v1/webhook',
      summary: 'Read the webhook configuration (never the secret)',
      permission: 'partnerOnly',
      status: 200,
      response: webhookView,
      async handler({ principal }) {
        const { webhook } = await webhooks.getWebhook({ partnerId: principal.partnerId });
        return toWebhookView(webhook as Webhook);
      },
    }),
    defineRoute({
      method: 'DELETE',
      url: '/v1/webhook',
      summary: 'Remove the webhook; pending deliveries end undelivered',
      permission: 'partnerOnly',
      status: 204,
      async handler({ principal }) {
        await webhooks.deleteWebhook({ partnerId: principal.partnerId });
      },
    }),
    defineRoute({
      method: 'POST',
      url: '/v1/webhook/test',
      summary:
        'Send a ping event through the delivery path and return that attempt (409 when no webhook is set)',
      permission: 'partnerOnly',
      status: 200,
      response: attemptView,
      async handler({ principal }) {
        const { attempt } = await webhooks.testWebhook(
          { partnerId: principal.partnerId, partnerSlug: principal.partnerSlug },
          { deadlineMs: TEST_DEADLINE_MS },
        );
        if (!attempt) throw new Error('the webhooks service answered without an attempt');
        return toAttemptView(attempt);
      },
    }),
  ];
}
