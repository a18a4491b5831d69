import { deliveryAttemptView, putWebhookView, webhookView } from '@svc/contracts/public';
import { z } from 'zod';
import type { WebhooksClient } from '../clients.ts';
import { jsonText } from '../http/json-text.ts';
import { type AnyOperation, defineOperation } from './operation.ts';

// The test ping waits for its attempt, which may run into the delivery deadline (10 s by default).
const TEST_DEADLINE_MS = 25_000;

export function webhookOperations(webhooks: WebhooksClient): AnyOperation[] {
  return [
    defineOperation({
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
      response: putWebhookView,
      async run({ principal, body }) {
        const { webhookJson } = await webhooks.putWebhook({
          partnerId: principal.partnerId,
          partnerSlug: principal.partnerSlug,
          url: body.url,
          rotateSecret: body.rotate_secret,
        });
        return jsonText(webhookJson);
      },
    }),
    defineOperation({
      method: 'GET',
      url: '/v1/webhook',
      summary: 'Read the webhook configuration (never the secret)',
      permission: 'partnerOnly',
      status: 200,
      response: webhookView,
      async run({ principal }) {
        const { webhookJson } = await webhooks.getWebhook({ partnerId: principal.partnerId });
        return jsonText(webhookJson);
      },
    }),
    defineOperation({
      method: 'DELETE',
      url: '/v1/webhook',
      summary: 'Remove the webhook; pending deliveries end undelivered',
      permission: 'partnerOnly',
      status: 204,
      async run({ principal }) {
        await webhooks.deleteWebhook({ partnerId: principal.partnerId });
      },
    }),
    defineOperation({
      method: 'POST',
      url: '/v1/webhook/test',
      summary:
        'Send a ping event through the delivery path and return that attempt (409 when no webhook is set)',
      permission: 'partnerOnly',
      status: 200,
      response: deliveryAttemptView,
      async run({ principal }) {
        const { attemptJson } = await webhooks.testWebhook(
          { partnerId: principal.partnerId, partnerSlug: principal.partnerSlug },
          { deadlineMs: TEST_DEADLINE_MS },
        );
        return jsonText(attemptJson);
      },
    }),
  ];
}
