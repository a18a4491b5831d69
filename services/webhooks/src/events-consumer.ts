// A devDependency on purpose: like the rest of the NATS client (through @svc/bus) it is compiled into
// the bundle, so the service runs one copy of it, never a bundled and an installed one side by side.
import { AckPolicy, DeliverPolicy, type JsMsg } from '@nats-io/jetstream';
import { type Bus, ensureDurableConsumer } from '@svc/bus';
import { GroupCommit } from '@svc/db';
import type { Logger } from '@svc/logging';
import type pg from 'pg';
import type { Clock } from './clock.ts';
import type { DeliveryWorker } from './delivery/worker.ts';
import { type IncomingEvent, InvalidEventError, readEnvelope, storeEvents } from './event-store.ts';
import type { DeliveryMetrics } from './metrics.ts';

const DURABLE = 'webhooks-store';
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
}

interface Received {
  message: JsMsg;
  event: IncomingEvent;
}

/**
 * The event store's durable JetStream consumer over every partner-facing event (explicit acks).
 * Each message is stored as the exact text received — the bytes every delivery sends — and
 * acknowledged only after its commit; whatever NATS redelivers (after a crash, an ack timeout)
 * finds its id stored already.
 *
 * Why not @svc/bus's runConsumer: it handles one message at a time, one commit each, which held
 * the store to about 800 events/s in bench:webhooks. This consumer group-commits instead: while one
 * batch is being written, the messages that arrive meanwhile gather and go in the next statement.
 * At low rates a batch is a single event written at once, so latency does not suffer.
 */
export async function consumeEvents(deps: ConsumerDeps): Promise<{ stop(): Promise<void> }> {
  const { bus, logger } = deps;
  const stream = bus.subjects.streamName('events');
  const durable = `${bus.subjects.prefix}${DURABLE}`;
  const config = {
    durable_name: durable,
    ack_policy: AckPolicy.Explicit,
    deliver_policy: DeliverPolicy.All,
    ack_wait: deps.ackWaitMs * 1e6,
    max_deliver: -1,
  };
  await ensureDurableConsumer(bus, stream, durable, config);
  const consumer = await bus.js.consumers.get(stream, durable);
  const messages = await consumer.consume({ max_messages: MAX_BATCH * 2 });

  const store = new GroupCommit((batch: Received[]) => storeBatch(deps, batch), { maxBatch: MAX_BATCH });

  const done = (async () => {
    for await (const message of messages) {
      const event = readEvent(message, logger);
      if (!event) continue;
      const stored = store.add({ message, event });
      if (store.backlog >= MAX_BATCH) await stored; // hold back while a full batch waits
    }
    await store.idle();
  })();

  return {
    async stop() {
      await messages.close();
      await done;
    },
  };
}

/** The message as an event to store, or null for one that is not an event envelope (acked and dropped). */
function readEvent(message: JsMsg, logger: Logger): IncomingEvent | null {
  const raw = message.string();
  try {
    return { raw, columns: readEnvelope(raw) };
  } catch (error) {
    if (!(error instanceof InvalidEventError)) throw error;
    // Redelivering it would never help: log it and let it go.
    logger.error(
      { subject: message.subject, seq: message.seq, reason: error.message },
      'dropped a message that is not an event envelope',
    );
    message.ack();
    return null;
  }
}

/** Stores one batch in one commit, then acks it; on failure naks it for redelivery (never throws). */
async function storeBatch(deps: ConsumerDeps, batch: Received[]): Promise<void> {
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
    deps.logger.error(
      { err: error, events: batch.length },
      'storing events failed; they will be redelivered',
    );
    for (const { message } of batch) message.nak(1_000);
  }
}
