export { ApiError, type ErrorCode } from './api-error.ts';
export {
  type CallOptions,
  type Client,
  type ClientOptions,
  createClient,
  type OperationId,
  type Result,
} from './client.ts';
export type { EventOfType, EventType, ServiceEvent } from './events.ts';
export type { components, operations, paths } from './generated/api.ts';
export { type ListPage, type PageRequest, paginate } from './paginate.ts';
export { type UploadMediaOptions, uploadMedia } from './upload.ts';
export {
  type HeaderBag,
  type VerificationFailure,
  type VerifyWebhookOptions,
  verifyWebhook,
  type WebhookEvent,
  WebhookVerificationError,
} from './verify-webhook.ts';
