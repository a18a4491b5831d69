import {
  AckPolicy,
  type ConsumerConfig,
  type ConsumerMessages,
  DeliverPolicy,
  type JsMsg,
} from '@nats-io/jetstream';
import { failSpan, inSpan, type Logger, newRequestId, withRequestId } from '@svc/logging';
import type { ConsumerSettings, DurableConsumer, Subject } from './catalog.ts';
import type { Bus } from './connection.ts';
import { type ConsumerObserver, deliveredTooOften, failed, replayedForAnother } from './dead-letters.ts';
import { carriedBy, consumerSpan, REQUEST_ID } from './trace-headers.ts';

/**
 * Durable pull consumers with explicit acks, as the catalog describes them. A handler gets the
 * payload checked against its subject's schema and must be idempotent (by event or job id):
 * JetStream redelivers whatever was not acked — after a crash, a timeout or a failed handler. A
 * message is acked only after its handler resolved, i.e. after the consumer's own commit. A
 * payload that does not match its schema is terminated: redelivering it would never help. A
 * handler that keeps failing gets the message back with growing delays, a bounded number of
 * times, and then the message goes to the dead-letter stream (dead-letters.ts).
 */
export interface RunningConsumer {
  /** Stops pulling messages; those being handled go on. */
  stopPulling(): Promise<void>;
  /** Resolves once pulling has stopped and every handler in flight has finished. */
  readonly finished: Promise<void>;
}

/**
 * How long one pull request waits on the server. The client re-pulls when two of the server's
 * heartbeats (every half of this) are missed: when the node leading the consumer is lost, its pull
 * requests are lost with it, and the consumer stalls until then (30 s with the client's default,
 * 5 s here). An idle consumer costs one pull request per 5 s.
 */
const PULL_EXPIRES_MS = 5_000;

/** Creates (or updates) the durable consumer and starts pulling up to `maxMessages` ahead. */
export async function pullMessages<P>(
  bus: Bus,
  consumer: DurableConsumer<P>,
  settings: ConsumerSettings,
  maxMessages: number,
): Promise<ConsumerMessages> {
  const stream = bus.subjects.streamName(consumer.subject.stream);
  const durable = bus.subjects.durable(consumer);
  const config = {
    durable_name: durable,
    ack_policy: AckPolicy.Explicit,
    deliver_policy: DeliverPolicy.All,
    ack_wait: settings.ackWaitMs * 1e6,
    // Unbounded on the server: the bound is kept by the handler's side, which dead-letters the
    // message instead of letting the server drop it (dead-letters.ts).
    max_deliver: -1,
    ...filterFor(bus, consumer.subject),
  };
  await ensureDurableConsumer(bus, stream, durable, config);
  return (await bus.js.consumers.get(stream, durable)).consume({
    max_messages: maxMessages,
    expires: PULL_EXPIRES_MS,
  });
}

/**
 * The payload of a message, checked against its subject's schema; `undefined` for a poison
 * message, which is logged (subject and schema issues, never the payload: it may hold secrets)
 * and terminated so JetStream never delivers it again.
 */
export function decodePayload<P>(
  subject: Subject<P>,
  message: JsMsg,
  logger: Logger,
  text: string = message.string(),
): P | undefined {
  let value: unknown;
  try {
    value = JSON.parse(text);
  } catch {
    return poison(message, logger, subject, [{ message: 'not JSON' }]);
  }
  const parsed = subject.schema.safeParse(value);
  return parsed.success ? parsed.data : poison(message, logger, subject, parsed.error.issues);
}

function poison(message: JsMsg, logger: Logger, subject: { payload: string }, issues: unknown[]): undefined {
  logger.error(
    { subject: message.subject, seq: message.seq, issues },
    `dropped a message that is not ${subject.payload}`,
  );
  // No reason text: servers before 2.10.4 (Debian 12 ships 2.9) ignore a `+TERM` that carries one.
  message.term();
  return undefined;
}

export async function consume<P>(
  bus: Bus,
  logger: Logger,
  consumer: DurableConsumer<P>,
  handle: (payload: P, message: JsMsg) => Promise<void>,
  overrides: Partial<ConsumerSettings> = {},
  observer?: ConsumerObserver,
): Promise<RunningConsumer> {
  const settings = { ...consumer.subject.settings, ...overrides };
  const policy = { durable: consumer.durable, settings, observer, logger };
  const messages = await pullMessages(bus, consumer, settings, 64);
  // A long handler tells the server it is alive, so the ack wait can stay short: a message held
  // by a worker that died is redelivered after one ack wait, not after the longest job.
  const heartbeatMs = Math.max(1_000, Math.floor(settings.ackWaitMs / 3));
  const span = consumerSpan(consumer);
  const process = (message: JsMsg) =>
    withRequestId(message.headers?.get(REQUEST_ID) || newRequestId(), () =>
      inSpan(span.name, carriedBy(span.start, message), async (traced) => {
        if (replayedForAnother(bus, consumer.durable, message)) return;
        if (await deliveredTooOften(bus, policy, message)) return;
        const payload = decodePayload(consumer.subject, message, logger);
        if (payload === undefined) return;
        const heartbeat = setInterval(() => message.working(), heartbeatMs);
        try {
          await handle(payload, message);
          message.ack();
        } catch (error) {
          if (traced) failSpan(traced, error);
          await failed(bus, policy, message, error);
        } finally {
          clearInterval(heartbeat);
        }
      }),
    );
  const limit = Math.max(1, settings.concurrency);
  const running = new Set<Promise<void>>();
  const finished = (async () => {
    for await (const message of messages) {
      const task = process(message).finally(() => running.delete(task));
      running.add(task);
      if (running.size >= limit) await Promise.race(running);
    }
    await Promise.all(running);
  })();
  return {
    async stopPulling() {
      await messages.close();
    },
    finished,
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

/** The whole stream (`>`) takes no filter: the durables that read one were created without. */
function filterFor(bus: Bus, subject: { name: string }): { filter_subject?: string } {
  return subject.name === '>' ? {} : { filter_subject: bus.subjects.subject(subject.name) };
}
