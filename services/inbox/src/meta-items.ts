import type { Network } from '@svc/contracts/public';
import type { MessageRow } from './inbox-rows.ts';
import type { MessageChange } from './message-changes.ts';

// What the readers of a Meta webhook body (meta-webhook.ts, meta-messaging.ts, meta-feed.ts) make
// of it: items to record, changes to what is stored, or what could not be read.

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
  story: MessageRow['replyStory'];
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
