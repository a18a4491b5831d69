export { AnnouncedCache, type AnnouncedCacheOptions } from './announced-cache.ts';
export { SIGNALS, STREAMS, type StreamKey, Subjects } from './catalog.ts';
export { type Bus, connectBus } from './connection.ts';
export { type ConsumerOptions, ensureDurableConsumer, runConsumer } from './consumer.ts';
export { type EventEnvelope, makeEvent } from './envelope.ts';
export { OutboxRelay, type OutboxRow, outboxRowFor } from './outbox.ts';
export { type EventScope, type KnownWorkspace, WorkspaceCache } from './workspace-cache.ts';
