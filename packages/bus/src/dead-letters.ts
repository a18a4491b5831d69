import type { JsMsg, StoredMsg } from '@nats-io/jetstream';
import { headers as natsHeaders } from '@nats-io/nats-core';
import type { Logger } from '@svc/logging';
import type { ConsumerSettings } from './catalog.ts';
import type { Bus } from './connection.ts';
import { copyRequestHeaders } from './trace-headers.ts';

/**
 * Poison messages: a message whose handler keeps failing is retried with growing delays (a nak
 * with a delay, so the messages behind it are handled meanwhile), and after the consumer's last
 * delivery it is copied to the DEAD_LETTERS stream with why, then acked: it never blocks anything
 * and is never lost. `pnpm dead-letters replay` puts it back on its subject, marked for the one
 * consumer that gave up on it (other readers of the subject ack it unhandled).
 *
 * The bound is counted here, not by JetStream's `max_deliver`: at that bound the server stops
 * delivering silently (only an advisory says so), whereas here the message is kept and counted.
 */

/** Headers of a dead letter: its payload is the original message's, byte for byte. */
const H = {
  consumer: 'Dead-Consumer',
  subject: 'Dead-Subject',
  deliveries: 'Dead-Deliveries',
  reason: 'Dead-Reason',
  at: 'Dead-At',
  /** On a replayed message: the only durable that handles it. */
  replayFor: 'Replay-For',
} as const;

/** What `pnpm dead-letters list` shows of one dead letter. */
export interface DeadLetter {
  /** The sequence in the DEAD_LETTERS stream, what `replay <id>` takes. */
  id: number;
  /** The durable (unprefixed) that gave up. */
  consumer: string;
  /** The original subject (unprefixed). */
  subject: string;
  deliveries: number;
  reason: string;
  at: string;
}

/** Counts what happens to messages, per durable (the service's metrics). */
export interface ConsumerObserver {
  redelivered(durable: string): void;
  deadLettered(durable: string): void;
}

/** Who a consumer is, for its failures: the durable and its retry settings. */
export interface FailurePolicy {
  durable: string;
  settings: Pick<ConsumerSettings, 'maxDeliver' | 'retryDelaysMs'>;
  observer?: ConsumerObserver;
  logger: Logger;
}

/** A message replayed for another durable of the same subject: acked and not handled here. */
export function replayedForAnother(bus: Bus, durable: string, message: JsMsg): boolean {
  const target = message.headers?.get(H.replayFor);
  if (!target || target === bus.subjects.durable({ durable })) return false;
  message.ack();
  return true;
}

/** Counts a redelivery; true when the message is past its last delivery already (its handler hung or its worker died every time): it is dead-lettered without running again. */
export async function deliveredTooOften(bus: Bus, policy: FailurePolicy, message: JsMsg): Promise<boolean> {
  const deliveries = message.info.deliveryCount;
  if (deliveries > 1) policy.observer?.redelivered(policy.durable);
  if (deliveries <= policy.settings.maxDeliver) return false;
  await failed(bus, policy, message, new Error(`not acknowledged after ${deliveries - 1} deliveries`));
  return true;
}

/** A failed delivery: retried after the next delay, or dead-lettered after the last delivery. */
export async function failed(bus: Bus, policy: FailurePolicy, message: JsMsg, error: unknown): Promise<void> {
  const deliveries = message.info.deliveryCount;
  const { maxDeliver, retryDelaysMs } = policy.settings;
  const reason = error instanceof Error ? error.message : String(error);
  const delay = retryDelaysMs[Math.min(deliveries, retryDelaysMs.length) - 1] ?? 1_000;
  if (deliveries < maxDeliver) {
    policy.logger.error(
      { err: error, subject: message.subject, deliveries, retryInMs: delay },
      'event handler failed; will be redelivered',
    );
    message.nak(delay);
    return;
  }
  try {
    await deadLetter(bus, policy.durable, message, reason);
  } catch (deadLetterError) {
    // NATS is failing too: keep the message where it is, the next delivery tries again.
    policy.logger.error({ err: deadLetterError }, 'could not dead-letter a message; will be redelivered');
    message.nak(delay);
    return;
  }
  message.ack();
  policy.observer?.deadLettered(policy.durable);
  policy.logger.error(
    { err: error, subject: message.subject, deliveries, consumer: policy.durable },
    'gave up on a message after its last delivery; moved to the dead-letter stream',
  );
}

async function deadLetter(bus: Bus, durable: string, message: JsMsg, reason: string): Promise<void> {
  const h = natsHeaders();
  h.set(H.consumer, durable);
  h.set(H.subject, bus.subjects.typeOf(message.subject));
  h.set(H.deliveries, String(message.info.deliveryCount));
  // One line: a header value cannot hold a line break.
  h.set(H.reason, reason.replace(/\s+/g, ' ').slice(0, 1_000));
  h.set(H.at, new Date().toISOString());
  copyRequestHeaders(message.headers, h);
  // Keyed by the original message and durable: a crash before the ack re-sends a copy JetStream drops.
  const msgID = `${message.info.stream}-${message.info.streamSequence}-${durable}`;
  await bus.js.publish(bus.subjects.subject(`dead.${durable}`), message.data, { headers: h, msgID });
}

/** Every dead letter kept, oldest first (optionally those of one durable). */
export async function listDeadLetters(bus: Bus, consumer?: string): Promise<DeadLetter[]> {
  const stream = bus.subjects.streamName('deadLetters');
  const { state } = await bus.jsm.streams.info(stream);
  const letters: DeadLetter[] = [];
  for (let seq = state.first_seq; seq <= state.last_seq && state.messages > 0; seq++) {
    const stored = await bus.jsm.streams.getMessage(stream, { seq }).catch(() => null);
    if (!stored) continue; // replayed, hence deleted
    const letter = describe(stored);
    if (!consumer || letter.consumer === consumer) letters.push(letter);
  }
  return letters;
}

function describe(stored: StoredMsg): DeadLetter {
  const get = (name: string) => stored.header.get(name);
  return {
    id: stored.seq,
    consumer: get(H.consumer),
    subject: get(H.subject),
    deliveries: Number(get(H.deliveries)),
    reason: get(H.reason),
    at: get(H.at),
  };
}

/**
 * Puts a dead letter back on its original subject for the durable that gave up on it, then
 * removes it from the dead-letter stream. Answers what was replayed.
 */
export async function replayDeadLetter(bus: Bus, id: number): Promise<DeadLetter> {
  const stream = bus.subjects.streamName('deadLetters');
  const stored = await bus.jsm.streams.getMessage(stream, { seq: id });
  if (!stored) throw new Error(`no dead letter ${id}`);
  const letter = describe(stored);
  const h = natsHeaders();
  h.set(H.replayFor, bus.subjects.durable({ durable: letter.consumer }));
  copyRequestHeaders(stored.header, h);
  // Keyed by the dead letter: replaying it twice in a row puts it back once.
  await bus.js.publish(bus.subjects.subject(letter.subject), stored.data, {
    headers: h,
    msgID: `replay-${stream}-${id}`,
  });
  await bus.jsm.streams.deleteMessage(stream, id);
  return letter;
}
