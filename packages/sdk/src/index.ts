export {
  type HeaderBag,
  type VerificationFailure,
  type VerifyWebhookOptions,
  verifyWebhook,
  type WebhookEvent,
  WebhookVerificationError,
} from './verify-webhook.ts';
