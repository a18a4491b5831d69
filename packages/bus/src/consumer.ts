import { AckPolicy, type ConsumerConfig, DeliverPolicy, type JsMsg } from '@nats-io/jetstream';
import { type Logger, newRequestId, withRequestId } from '@svc/logging';
import type { StreamKey } from './catalog.ts';
import type { Bus } from './connection.ts';

/**
 * A durable pull consumer with explicit acks. The handler must be idempotent (by event id):
 * JetStream redelivers whatever was not acked — after a crash, a timeout or a failed handler.
 * The message is acked only after the handler resolved, i.e. after the consumer's own commit.
 */
export interface ConsumerOptions {
  stream: StreamKey;
  durable: string;
  /** Event types (unprefixed) to receive; all of the stream when omitted. */
  types?: string[];
  ackWaitMs?: number;
  maxDeliver?: number;
  /** Messages handled at once (default 1: in order). Above 1, order is not kept. */
  concurrency?: number;
}

export async function runConsumer(
  bus: Bus,
  logger: Logger,
  options: ConsumerOptions,
  handle: (type: string, payload: unknown, message: JsMsg) => Promise<void>,
): Promise<{ stop(): Promise<void> }> {
  const stream = bus.subjects.streamName(options.stream);
  const durable = `${bus.subjects.prefix}${options.durable}`;
  const config = {
    durable_name: durable,
    ack_policy: AckPolicy.Explicit,
    deliver_policy: DeliverPolicy.All,
    ack_wait: (options.ackWaitMs ?? 30_000) * 1e6,
    max_deliver: options.maxDeliver ?? -1,
    // One type uses `filter_subject`, which every JetStream server knows; several need a
    // server of version 2.10 or later (`filter_subjects`).
    ...filterFor(options.types?.map((t) => bus.subjects.subject(t))),
  };
  await ensureDurableConsumer(bus, stream, durable, config);
  const consumer = await bus.js.consumers.get(stream, durable);
  const messages = await consumer.consume({ max_messages: 64 });
  // A long handler tells the server it is alive, so the ack wait can stay short: a message held
  // by a worker that died is redelivered after one ack wait, not after the longest job.
  const heartbeatMs = Math.max(1_000, Math.floor((options.ackWaitMs ?? 30_000) / 3));
  const process = (message: JsMsg) =>
    withRequestId(message.headers?.get('X-Request-Id') || newRequestId(), async () => {
      const heartbeat = setInterval(() => message.working(), heartbeatMs);
      try {
        await handle(bus.subjects.typeOf(message.subject), message.json(), message);
        message.ack();
      } catch (error) {
        logger.error({ err: error, subject: message.subject }, 'event handler failed; will be redelivered');
        message.nak(1000);
      } finally {
        clearInterval(heartbeat);
      }
    });
  const limit = Math.max(1, options.concurrency ?? 1);
  const running = new Set<Promise<void>>();
  const done = (async () => {
    for await (const message of messages) {
      const task = process(message).finally(() => running.delete(task));
      running.add(task);
      if (running.size >= limit) await Promise.race(running);
    }
    await Promise.all(running);
  })();
  return {
    async stop() {
      await messages.close();
      await done;
    },
  };
}

/** Creates the durable consumer, or brings an existing one to this configuration. */
export async function ensureDurableConsumer(
  bus: Bus,
  stream: string,
  durable: string,
  config: Partial<ConsumerConfig>,
): Promise<void> {
  try {
    await bus.jsm.consumers.info(stream, durable);
    await bus.jsm.consumers.update(stream, durable, config);
  } catch {
    await bus.jsm.consumers.add(stream, { ...config, durable_name: durable });
  }
}

function filterFor(subjects: string[] | undefined): { filter_subject?: string; filter_subjects?: string[] } {
  if (!subjects || subjects.length === 0) return {};
  return subjects.length === 1 ? { filter_subject: subjects[0] } : { filter_subjects: subjects };
}
