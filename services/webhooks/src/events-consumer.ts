import { type Bus, CONSUMERS, decodePayload, type JsMsg, pullMessages, type RunningConsumer } from '@svc/bus';
import type { Logger } from '@svc/logging';
import type pg from 'pg';
import type { Clock } from './clock.ts';
import type { DeliveryWorker } from './delivery/worker.ts';
import { columnsOf, type IncomingEvent, storeEvents } from './event-store.ts';
import type { DeliveryMetrics } from './metrics.ts';

/** The most events stored in one statement (and one commit). */
const MAX_BATCH = 200;

/**
 * The event store's durable JetStream consumer over every partner-facing event (explicit acks).
 * Each message is stored as the exact text received — the bytes every delivery sends — and
 * acknowledged only after its commit; whatever NATS redelivers (after a crash, an ack timeout)
 * finds its id stored already. A message that is not an event envelope is terminated.
 *
 * Why not @svc/bus's consume: it handles one message at a time, one commit each, which held the
 * store to about 800 events/s in bench:webhooks. This consumer group-commits instead: while one
 * batch is being written, the messages that arrive meanwhile gather and go in the next statement.
 * At low rates a batch is a single event written at once, so latency does not suffer.
 */
export async function consumeEvents(deps: {
  bus: Bus;
  pool: pg.Pool;
  clock: Clock;
  logger: Logger;
  worker: DeliveryWorker;
  metrics: DeliveryMetrics;
  ackWaitMs: number;
}): Promise<RunningConsumer> {
  const { bus, logger } = deps;
  const consumer = CONSUMERS.webhooksStore;
  const settings = { ...consumer.subject.settings, ackWaitMs: deps.ackWaitMs };
  const messages = await pullMessages(bus, consumer, settings, MAX_BATCH * 2);

  let waiting: { message: JsMsg; event: IncomingEvent }[] = [];
  let writing: Promise<void> | undefined;

  /** Writes what is waiting, batch after batch, until nothing is; one writer at a time. */
  const writeWaiting = (): Promise<void> => {
    writing ??= (async () => {
      await Promise.resolve(); // always after the caller's assignment, so the reset below sticks
      while (waiting.length > 0) {
        const batch = waiting.slice(0, MAX_BATCH);
        waiting = waiting.slice(batch.length);
        await writeBatch(batch);
      }
      writing = undefined; // in the same step as the emptiness check: no message can slip between
    })();
    return writing;
  };

  const writeBatch = async (batch: { message: JsMsg; event: IncomingEvent }[]) => {
    try {
      const { stored, scheduled } = await storeEvents(
        deps.pool,
        batch.map((b) => b.event),
        deps.clock.now(),
      );
      for (const { message } of batch) message.ack();
      deps.metrics.events(stored, batch.length - stored);
      if (scheduled > 0) deps.worker.kick();
    } catch (error) {
      logger.error({ err: error, events: batch.length }, 'storing events failed; they will be redelivered');
      for (const { message } of batch) message.nak(1_000);
    }
  };

  const finished = (async () => {
    for await (const message of messages) {
      const raw = message.string();
      const envelope = decodePayload(consumer.subject, message, logger, raw);
      if (!envelope) continue;
      waiting.push({ message, event: { raw, columns: columnsOf(envelope) } });
      const flushing = writeWaiting();
      if (waiting.length >= MAX_BATCH) await flushing; // hold back while a full batch waits
    }
    await writing;
  })();

  return {
    async stopPulling() {
      await messages.close();
    },
    finished,
  };
}
