import {
  type Bus,
  CONSUMERS,
  type ConsumerObserver,
  carriedBy,
  consumerSpan,
  decodePayload,
  deliveredTooOften,
  type FailurePolicy,
  failed,
  type JsMsg,
  pullMessages,
  type RunningConsumer,
  replayedForAnother,
} from '@svc/bus';
import { GroupCommit } from '@svc/db';
import { failSpan, type Logger, type Span, startSpan, tracingEnabled } from '@svc/logging';
import type pg from 'pg';
import type { Clock } from './clock.ts';
import type { DeliveryWorker } from './delivery/worker.ts';
import { columnsOf, type IncomingEvent, storeEvents } from './event-store.ts';
import type { DeliveryMetrics } from './metrics.ts';

/** The most events stored in one statement (and one commit). */
const MAX_BATCH = 200;

interface ConsumerDeps {
  bus: Bus;
  pool: pg.Pool;
  clock: Clock;
  logger: Logger;
  worker: DeliveryWorker;
  metrics: DeliveryMetrics;
  ackWaitMs: number;
  observer?: ConsumerObserver;
}

interface Received {
  message: JsMsg;
  event: IncomingEvent;
  /** With tracing on: the message's consumer span, ended once its batch is stored or failed. */
  span?: Span;
}

/**
 * The event store's durable JetStream consumer over every partner-facing event (explicit acks).
 * Each message is stored as the exact text received — the bytes every delivery sends — and
 * acknowledged only after its commit; whatever NATS redelivers (after a crash, an ack timeout)
 * finds its id stored already. A message that is not an event envelope is terminated.
 *
 * Why not @svc/bus's consume: it handles one message at a time, one commit each, so the store
 * could take no more events a second than Postgres commits. This consumer group-commits instead: while one
 * batch is being written, the messages that arrive meanwhile gather and go in the next statement.
 * At low rates a batch is a single event written at once, so latency does not suffer.
 */
export async function consumeEvents(deps: ConsumerDeps): Promise<RunningConsumer> {
  const { bus, logger } = deps;
  const consumer = CONSUMERS.webhooksStore;
  const settings = { ...consumer.subject.settings, ackWaitMs: deps.ackWaitMs };
  const messages = await pullMessages(bus, consumer, settings, MAX_BATCH * 2);
  const policy = { durable: consumer.durable, settings, observer: deps.observer, logger };
  const traced = consumerSpan(consumer);
  const store = new GroupCommit((batch: Received[]) => storeBatch(deps, policy, batch), {
    maxBatch: MAX_BATCH,
  });

  const finished = (async () => {
    for await (const message of messages) {
      if (replayedForAnother(bus, consumer.durable, message)) continue;
      if (await deliveredTooOften(bus, policy, message)) continue;
      const raw = message.string();
      const envelope = decodePayload(consumer.subject, message, logger, raw);
      if (!envelope) continue;
      const span = tracingEnabled()
        ? startSpan(`store ${envelope.type}`, carriedBy(traced.start, message))?.span
        : undefined;
      const stored = store.add({ message, event: { raw, columns: columnsOf(envelope) }, span });
      if (store.backlog >= MAX_BATCH) await stored; // hold back while a full batch waits
    }
    await store.idle();
  })();

  return {
    async stopPulling() {
      await messages.close();
    },
    finished,
  };
}

/**
 * Stores one batch in one commit, then acks it; on failure each message is retried later, or
 * dead-lettered after its last delivery (never throws).
 */
async function storeBatch(deps: ConsumerDeps, policy: FailurePolicy, batch: Received[]): Promise<void> {
  try {
    const { stored, scheduled } = await storeEvents(
      deps.pool,
      batch.map((b) => b.event),
      deps.clock.now(),
    );
    for (const { message, span } of batch) {
      message.ack();
      span?.end();
    }
    deps.metrics.events(stored, batch.length - stored);
    if (scheduled > 0) deps.worker.kick();
  } catch (error) {
    deps.logger.error({ err: error, events: batch.length }, 'storing a batch of events failed');
    for (const { span } of batch) {
      if (!span) continue;
      failSpan(span, error);
      span.end();
    }
    await Promise.all(batch.map(({ message }) => failed(deps.bus, policy, message, error)));
  }
}
