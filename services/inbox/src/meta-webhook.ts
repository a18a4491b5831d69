import type { Network } from '@svc/contracts/public';
import { z } from 'zod';
import type { MessageChange } from './message-changes.ts';
import { feedChange } from './meta-feed.ts';
import { messagingItem } from './meta-messaging.ts';
import { issuesOf } from './meta-reading.ts';
import type { MessageRow } from './views.ts';

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
export type InboundItem = DmItem | CommentItem;

/** Where an item happened: the network, the connected account's network id, and when. */
export interface Located {
  network: Network;
  /** The connected account's network id (`entry.id`). */
  accountPlatformId: string;
  at: Date;
}

interface ItemBase extends Located {
  /** The mid or comment id: what makes a second delivery the same message. */
  platformId: string;
  text: string | null;
}

export interface DmItem extends ItemBase {
  type: 'dm';
  /** The other person's page- or app-scoped id. */
  contactId: string;
  /** Sent by the business (from any app, ours included). */
  echo: boolean;
  /** The app that sent an echo (ours when it went through our Send API call). */
  appId: string | null;
  attachments: MessageRow['attachments'];
  /** The mid of the message this one replies to (`reply_to.mid`). */
  parentPlatformId: string | null;
  /** The story this one replies to (`reply_to.story`, Instagram). */
  story: MessageRow['reply_story'];
  /** `is_unsupported`: the network does not show what it is. */
  unsupported: boolean;
}

export interface CommentItem extends ItemBase {
  type: 'comment';
  /** The commented media or post. */
  objectId: string;
  /** The top-level comment a reply answers; null for a top-level comment. */
  parentId: string | null;
  from: { id: string; name: string | null; handle: string | null };
  /** Written by the account itself (our own replies included). */
  self: boolean;
  permalink: string | null;
}

/** A change to a stored message or comment, found by its network id. */
export interface ChangeItem extends Located {
  type: 'change';
  platformId: string;
  change: MessageChange;
}

/** The person has seen the account's messages: up to a time (Messenger) or up to one message (Instagram). */
export interface ReadItem extends Located {
  type: 'read';
  contactId: string;
  mid: string | null;
  upTo: Date | null;
}

export type InboxChange = ChangeItem | ReadItem;

/** A part of a body we should understand and cannot, and why (the paths, never the values). */
export interface Unreadable {
  type: 'unreadable';
  reason: string;
}

/** What one messaging item or change is: something to record, nothing for us (null), or unreadable. */
export type Reading = InboundItem | InboxChange | Unreadable | null;

export interface ReadWebhook {
  items: InboundItem[];
  changes: InboxChange[];
  /** What could not be read, each with where it is in the body. */
  unreadable: string[];
}

const id = z.coerce.string().min(1);
const body = z.looseObject({
  object: z.string(),
  entry: z.array(
    z.looseObject({
      id,
      time: z.number().optional(),
      messaging: z.array(z.unknown()).optional(),
      changes: z.array(z.unknown()).optional(),
    }),
  ),
});

const NETWORK_OF: Record<string, Network> = { instagram: 'photo_network', page: 'page_network' };

/** Reads a webhook body as Meta sent it (the raw text): never throws. */
export function readWebhook(text: string): ReadWebhook {
  const read: ReadWebhook = { items: [], changes: [], unreadable: [] };
  let payload: unknown;
  try {
    payload = JSON.parse(text);
  } catch {
    read.unreadable.push('the body is not JSON');
    return read;
  }
  const parsed = body.safeParse(payload);
  if (!parsed.success) {
    read.unreadable.push(`not a webhook body: ${issuesOf(parsed.error)}`);
    return read;
  }
  // Other objects (`permissions`, `user`) are the accounts service's.
  const network = NETWORK_OF[parsed.data.object];
  if (!network) return read;
  for (const [index, entry] of parsed.data.entry.entries()) {
    const at = entryTime(entry.time);
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

/** `entry.time` is in ms for messaging entries and in seconds for `changes` entries (facts §5.4). */
function entryTime(time: number | undefined): Date {
  if (time === undefined) return new Date();
  return new Date(time < 1e11 ? time * 1000 : time);
}
