import type { IdempotencyClaim } from '@svc/contracts';
import type { MessageView } from '@svc/contracts/public';
import type { AccountsDirectory } from '@svc/directory';
import { errors } from '@svc/errors';
import type { GraphClient } from '@svc/graph-client';
import type { InboxEvents } from './inbox-events.ts';
import type { MessageRow } from './inbox-rows.ts';
import type { InboxStore } from './inbox-store.ts';
import type { SendRecords } from './send-records.ts';
import { messageView } from './views.ts';

/** What a send of either kind (a message, a private reply) works with. */
export interface SendingParts {
  store: InboxStore;
  records: SendRecords;
  accounts: AccountsDirectory;
  graph: GraphClient;
  events: InboxEvents;
  now: () => Date;
}

/**
 * `Idempotency-Key` on sends: the key is stored on the outbound message itself, claimed before
 * the network is called (a unique index per partner), so a retry never reaches the person twice,
 * even across a crash. A retry answers the message sent; another request under the same key is a
 * 409, and so is a retry while the first is still being sent. A send whose outcome is unknown (a
 * timeout, a crash) is settled with the network after a bounded time (send-settlement.ts): the key
 * then answers the message, or is free again when the network never got it.
 */

/** The answer to a retried send: the message sent under this key, or undefined when the key is new. */
export async function replayedSend(
  store: InboxStore,
  partnerId: string,
  idempotency: IdempotencyClaim | undefined,
  now: Date,
): Promise<{ message: MessageView; replayed: true } | undefined> {
  const earlier = await earlierSend(store, partnerId, idempotency);
  return earlier && { message: messageView(earlier, now), replayed: true };
}

async function earlierSend(
  store: InboxStore,
  partnerId: string,
  idempotency: IdempotencyClaim | undefined,
): Promise<MessageRow | undefined> {
  if (!idempotency?.key) return undefined;
  const earlier = await store.byIdempotencyKey(partnerId, idempotency.key);
  if (!earlier) return undefined;
  if (earlier.requestHash !== idempotency.requestHash)
    throw errors.conflict('this Idempotency-Key was used for a different request');
  if (earlier.state !== 'sent')
    throw errors.conflict('a request with this Idempotency-Key is still being sent; retry shortly');
  return earlier;
}
