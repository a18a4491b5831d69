import type { Network } from '@svc/contracts/public';
import { readWebhookBody } from '@svc/graph-client';
import { feedChange } from './meta-feed.ts';
import type { InboundItem, InboxChange, Reading } from './meta-items.ts';
import { messagingItem } from './meta-messaging.ts';
import { metaTime } from './meta-reading.ts';

/**
 * What a Meta webhook body says about inboxes (facts §5.4–5.8), read leniently: new DMs and their
 * echoes (`messaging[]`), new Instagram comments (`changes[comments]`) and Page comments
 * (`changes[feed]`), and the changes to what is stored: edits, unsends, removed or hidden comments,
 * reactions and read receipts. What we do not use (deliveries, postbacks, standby, handover,
 * referrals, posts and reactions on the Page feed, other fields) is left out on purpose. A part we
 * should understand but cannot read is reported as `unreadable` (the body then becomes a dead
 * letter an operator can replay), never dropped in silence. Each item names the account by the
 * network's id (`entry.id`); one body may hold many entries and items (Meta batches them).
 */
export interface ReadWebhook {
  items: InboundItem[];
  changes: InboxChange[];
  /** What could not be read, each with where it is in the body. */
  unreadable: string[];
}

const NETWORK_OF: Record<string, Network> = { instagram: 'photo_network', page: 'page_network' };

/** Reads a webhook body as Meta sent it (the raw text): never throws. */
export function readWebhook(text: string): ReadWebhook {
  const read: ReadWebhook = { items: [], changes: [], unreadable: [] };
  const parsed = readWebhookBody(text);
  if ('unreadable' in parsed) {
    read.unreadable.push(parsed.unreadable);
    return read;
  }
  // Other objects (`permissions`, `user`) are the accounts service's.
  const network = NETWORK_OF[parsed.body.object];
  if (!network) return read;
  for (const [index, entry] of parsed.body.entry.entries()) {
    // No `time`: the moment it arrived. Meta sends ms on messaging entries, seconds on `changes`.
    const at = entry.time === undefined ? new Date() : metaTime(entry.time);
    const place = { network, accountPlatformId: entry.id, at };
    // `standby` (another app owns the thread: handover protocol) is left to the thread's owner.
    for (const [i, raw] of (entry.messaging ?? []).entries())
      add(read, messagingItem(place, raw), `entry[${index}].messaging[${i}]`);
    for (const [i, raw] of (entry.changes ?? []).entries())
      add(read, feedChange(place, raw), `entry[${index}].changes[${i}]`);
  }
  return read;
}

function add(read: ReadWebhook, reading: Reading, where: string): void {
  if (reading === null) return;
  if (reading.type === 'unreadable') read.unreadable.push(`${where}: ${reading.reason}`);
  else if (reading.type === 'dm' || reading.type === 'comment') read.items.push(reading);
  else read.changes.push(reading);
}
