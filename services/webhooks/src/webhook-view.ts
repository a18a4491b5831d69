import type { PutWebhookView, WebhookView } from '@svc/contracts/public';
import type { Webhook } from './generated/prisma/client.ts';

/** The webhook as its partner sees it (`WebhookView`): the only place the row becomes it, never with its secret. */
export function viewOfWebhook(row: Webhook): WebhookView {
  return { url: row.url, created: row.createdAt.toISOString(), updated: row.updatedAt.toISOString() };
}

/** The answer to setting the webhook: with the secret only when this call created or rotated it. */
export function viewOfPutWebhook(row: Webhook, secret: string | null): PutWebhookView {
  return { ...viewOfWebhook(row), ...(secret ? { secret } : {}) };
}
