export type { JsMsg } from '@nats-io/jetstream';
export { announcedKeys } from './announced-keys.ts';
export {
  ACCOUNT_ANNOUNCEMENTS,
  type AccountEvent,
  CONSUMERS,
  type ConsumerSettings,
  type DurableConsumer,
  type EmbedSessionSignal,
  IN_ORDER,
  type JobSubject,
  type MetaWebhook,
  type PostEvent,
  type PublishJob,
  SIGNALS,
  STREAMS,
  type StreamKey,
  SUBJECTS,
  type Subject,
  Subjects,
  type WorkspaceSignal,
} from './catalog.ts';
export { type Bus, connectBus } from './connection.ts';
export {
  consume,
  decodePayload,
  ensureDurableConsumer,
  pullMessages,
  type RunningConsumer,
} from './consumer.ts';
export { type NatsCredentials, natsCredentials } from './credentials.ts';
export {
  type ConsumerObserver,
  type DeadLetter,
  deliveredTooOften,
  type FailurePolicy,
  failed,
  listDeadLetters,
  replayDeadLetter,
  replayedForAnother,
} from './dead-letters.ts';
export {
  type EventScope,
  envelopeWith,
  eventEnvelopeSchema,
  makeEvent,
} from './envelope.ts';
export {
  eventRow,
  jobRow,
  type OutboxRow,
  type OutboxTransaction,
  outboxColumns,
  outboxInsertSql,
  writeOutbox,
} from './outbox.ts';
export { OutboxRelay } from './outbox-relay.ts';
export { carriedBy, consumerSpan, currentHeaders } from './trace-headers.ts';
