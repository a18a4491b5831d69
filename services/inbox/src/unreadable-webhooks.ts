import { type Bus, CONSUMERS, type ConsumerObserver, failed, type JsMsg } from '@svc/bus';
import type { Logger } from '@svc/logging';

/** How many unreadable parts a dead letter's reason names (its header is one line of 1,000 at most). */
const PARTS_NAMED = 5;

/**
 * A Meta webhook body (or part of one) the intake should understand and cannot read. Sending the
 * same bytes again cannot help, so it is not retried: it goes to the dead-letter stream at once,
 * kept byte for byte with why, where `pnpm dead-letters list` shows it and `replay` brings it back
 * once the intake reads it (what the body held that could be read was recorded already; a replay
 * records it once). Meta got its 200 long before, so nothing is asked of it again.
 */
export class UnreadableWebhook extends Error {
  constructor(parts: string[]) {
    const more = parts.length > PARTS_NAMED ? ` (and ${parts.length - PARTS_NAMED} more)` : '';
    super(`unreadable Meta webhook: ${parts.slice(0, PARTS_NAMED).join('; ')}${more}`);
    this.name = 'UnreadableWebhook';
  }
}

export async function deadLetterAtOnce(
  deps: { bus: Bus; logger: Logger; observer?: ConsumerObserver | undefined },
  message: JsMsg,
  error: UnreadableWebhook,
): Promise<void> {
  // One delivery allowed: `failed` moves it to DEAD_LETTERS and acks it (or, if NATS fails, naks
  // it for a later try; the consumer's ack after the handler is then a no-op: the first answer wins).
  const policy = {
    durable: CONSUMERS.inboxProviderWebhooks.durable,
    settings: { maxDeliver: 1, retryDelaysMs: [] },
    logger: deps.logger,
    observer: deps.observer,
  };
  await failed(deps.bus, policy, message, error);
}
