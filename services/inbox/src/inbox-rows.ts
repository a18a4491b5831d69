import type { ConversationView, MessageView, Network } from '@svc/contracts/public';
import type { Fields } from '@svc/db';
import type { ConversationPosition } from './conversation-cursor.ts';

/**
 * Rows as the inbox store reads them (views.ts makes the public shapes of them). Each statement
 * names the columns it returns with these fields (`selectList` of the `*_FIELDS` below, see
 * inbox-statements.ts), never `*`: the rows are these types as they come.
 */
export interface ConversationRow {
  id: string;
  partnerId: string;
  workspaceId: string;
  accountId: string;
  network: Network;
  kind: 'dm' | 'comments';
  threadKey: string;
  contact: ConversationView['contact'];
  object: { id: string; permalink: string | null; caption: string | null } | null;
  /** Our post id when the commented object is one of our posts (joined from published_objects). */
  postId: string | null;
  lastMessageAt: Date | null;
  lastInboundAt: Date | null;
  readByContactAt: Date | null;
  unreadCount: number;
  archived: boolean;
  createdAt: Date;
  updatedAt: Date;
}

/** A conversation with its post, as CONVERSATION joins it (alias `c`, published objects `po`). */
export const CONVERSATION_FIELDS: Fields<ConversationRow> = {
  id: true,
  partnerId: true,
  workspaceId: true,
  accountId: true,
  network: true,
  kind: true,
  threadKey: true,
  contact: true,
  object: true,
  postId: 'po.post_id',
  lastMessageAt: true,
  lastInboundAt: true,
  readByContactAt: true,
  unreadCount: true,
  archived: true,
  createdAt: true,
  updatedAt: true,
};

export interface MessageRow {
  id: string;
  conversationId: string;
  partnerId: string;
  workspaceId: string;
  accountId: string;
  direction: 'inbound' | 'outbound';
  kind: MessageView['kind'];
  platformMessageId: string | null;
  sender: MessageView['from'];
  text: string | null;
  attachments: MessageView['attachments'];
  parentPlatformId: string | null;
  /** The `msg_` id of the comment a reply answers or the DM a DM replies to (joined), when stored. */
  parentId: string | null;
  replyStory: MessageView['story'];
  unsupported: boolean;
  reactions: MessageView['reactions'];
  hidden: boolean;
  editedAt: Date | null;
  deletedAt: Date | null;
  source: MessageView['source'];
  state: 'sending' | 'sent';
  privateReplyState: 'sending' | 'sent' | 'not_allowed' | null;
  privateReplyId: string | null;
  /** The Idempotency-Key a send holds (send-records.ts), null for what the network brought. */
  idempotencyKey: string | null;
  requestHash: string | null;
  /** The text of the private reply sent (joined). */
  privateReplyText: string | null;
  createdAt: Date;
  storedAt: Date;
}

/** A message as MESSAGE joins it (alias `m`; the parent `p`, the private reply `pr`). */
export const MESSAGE_FIELDS: Fields<MessageRow> = {
  id: true,
  conversationId: true,
  partnerId: true,
  workspaceId: true,
  accountId: true,
  direction: true,
  kind: true,
  platformMessageId: true,
  sender: true,
  text: true,
  attachments: true,
  parentPlatformId: true,
  parentId: 'p.id',
  replyStory: true,
  unsupported: true,
  reactions: true,
  hidden: true,
  editedAt: true,
  deletedAt: true,
  source: true,
  state: true,
  privateReplyState: true,
  privateReplyId: true,
  idempotencyKey: true,
  requestHash: true,
  privateReplyText: 'pr.text',
  createdAt: true,
  storedAt: true,
};

/** A conversation by its thread (see threadOf), as ensuring conversations answers them. */
export interface ThreadRow {
  id: string;
  accountId: string;
  kind: ConversationRow['kind'];
  threadKey: string;
}

export const THREAD_FIELDS: Fields<ThreadRow> = { id: true, accountId: true, kind: true, threadKey: true };

/** What the inbox store writes: a conversation or a message to record, and what a message counts. */
export interface NewConversation {
  id: string;
  partnerId: string;
  workspaceId: string;
  accountId: string;
  network: string;
  kind: 'dm' | 'comments';
  threadKey: string;
  contact: ConversationRow['contact'];
  object: ConversationRow['object'];
  at: Date;
}

export interface NewMessage {
  id: string;
  conversationId: string;
  partnerId: string;
  workspaceId: string;
  accountId: string;
  direction: 'inbound' | 'outbound';
  kind: MessageRow['kind'];
  platformMessageId: string | null;
  sender: MessageRow['sender'];
  text: string | null;
  attachments: MessageRow['attachments'];
  parentPlatformId: string | null;
  /** Instagram: the story a DM replies to (none when absent). */
  story?: MessageRow['replyStory'];
  /** The network does not show what it is (`is_unsupported`; false when absent). */
  unsupported?: boolean;
  source: MessageRow['source'];
  state: 'sending' | 'sent';
  idempotencyKey: string | null;
  requestHash: string | null;
  createdAt: Date;
  storedAt: Date;
}

export interface ConversationFilter {
  workspaceId: string;
  accountId: string;
  kind: string;
  unread: boolean | undefined;
  archived: boolean | undefined;
  since: Date | undefined;
  page: number;
  limit: number;
  /** The page after this position (cursor paging) instead of the offset of `page`. */
  after?: ConversationPosition | undefined;
}

/** What a message changes in its conversation. */
export interface MessageCount {
  at: Date;
  inbound: boolean;
  unread: boolean;
}

/** The key of a thread: one conversation per account, kind and thread key. */
export const threadOf = (c: Pick<NewConversation, 'accountId' | 'kind' | 'threadKey'>) =>
  `${c.accountId}:${c.kind}:${c.threadKey}`;
