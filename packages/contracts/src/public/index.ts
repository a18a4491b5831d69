// The public shapes partners see, each defined once: the owning service builds it, the gateway
// answers it as it is (and documents it in OpenAPI from these schemas), events carry it.
export { type AccountView, accountView } from './account.ts';
export { type ApiKeyView, apiKeyView, type CreatedApiKeyView, createdApiKeyView } from './api-key.ts';
export { type ConnectLinkView, connectLinkView } from './connect-link.ts';
export {
  type ConversationView,
  conversationView,
  type MessageView,
  messageView,
} from './conversation.ts';
export {
  type DeliveryAttemptPageView,
  type DeliveryAttemptView,
  deliveryAttemptPageView,
  deliveryAttemptView,
  type RedeliveryView,
  redeliveryView,
} from './delivery.ts';
export {
  type CreatedEmbedSessionView,
  createdEmbedSessionView,
  type EmbedSessionView,
  type EmbedSurface,
  embedSessionView,
  embedSurface,
} from './embed-session.ts';
export { EVENT_DATA, type EventEnvelope, type EventType, eventEnvelope, eventSchemas } from './event.ts';
export { type MediaView, mediaView } from './media.ts';
export {
  type PostDryRunView,
  type PostFormat,
  type PostMediaView,
  type PostView,
  type PublishingLimitView,
  postDryRunView,
  postFormat,
  postMediaView,
  postView,
  publishingLimitView,
  type ReelView,
  reelView,
} from './post.ts';
export { type Network, network, type RequestOrigin, requestOrigin, timestamp } from './shared.ts';
export { type PutWebhookView, putWebhookView, type WebhookView, webhookView } from './webhook.ts';
export { type WorkspaceView, workspaceView } from './workspace.ts';
