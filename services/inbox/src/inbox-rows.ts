import type { ConversationPosition } from './conversation-cursor.ts';
import type { ConversationRow, MessageRow } from './views.ts';

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
  story?: MessageRow['reply_story'];
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
