import type { webhooks } from './generated/api.ts';

/** The event types of spec section 6 (`ping`, `account.connected`, `post.published`...). */
export type EventType = keyof webhooks;

/** One event of a given type, exactly as a webhook delivery carries it and `listEvents` lists it. */
export type EventOfType<T extends EventType> =
  webhooks[T]['post']['requestBody']['content']['application/json'];

/** Any event: narrow it by `type` (`if (event.type === 'post.failed') event.data.post...`). */
export type ServiceEvent = { [T in EventType]: EventOfType<T> }[EventType];
