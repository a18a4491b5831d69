// The public shapes partners see, each defined once: the owning service builds it, the gateway
// answers it as it is (and documents it in OpenAPI from these schemas), events carry it.
export { type AccountView, accountView } from './account.ts';
export {
  type ConversationView,
  conversationView,
  type MessageView,
  messageView,
} from './conversation.ts';
export { EVENT_DATA, type EventType, eventSchemas } from './event.ts';
export { type MediaView, mediaView } from './media.ts';
export {
  type PostDryRunView,
  type PostMediaView,
  type PostView,
  type PublishingLimitView,
  postDryRunView,
  postMediaView,
  postView,
  publishingLimitView,
} from './post.ts';
export { type Network, network, timestamp } from './shared.ts';
