import type pg from 'pg';
import {
  type ConversationRow,
  type MessageCount,
  type MessageRow,
  type NewConversation,
  type NewMessage,
  type ThreadRow,
  threadOf,
} from './inbox-rows.ts';
import {
  COMPLETE_MESSAGES,
  COUNT_MESSAGES,
  ENSURE_CONVERSATIONS,
  INSERT_MESSAGES,
  MARK_READ_BY_CONTACT,
  REWRITE_MESSAGE,
  SETTLE_PRIVATE_REPLY,
  THREADS,
} from './inbox-statements.ts';
import type { MessageContent } from './message-changes.ts';

export type Queryable = Pick<pg.ClientBase, 'query'>;

/**
 * What the inbox records in a transaction of its caller's (`db`, see InboxStore.write):
 * conversations made sure of, messages stored, completed and rewritten, what they count in their
 * conversations, read receipts and private replies settled. A conversation is one per (account,
 * kind, thread key); a message is one per (account, network id), which is what makes a webhook
 * delivered twice, or an import run twice, record nothing new.
 */
export class InboxWrites {
  /** The conversation's id, created if new (see ensureConversations). */
  async ensureConversation(db: Queryable, c: NewConversation): Promise<string> {
    return (await this.ensureConversations(db, [c])).get(threadOf(c)) ?? c.id;
  }

  /**
   * The conversations of these threads by `threadOf`, created where new, in one statement; a
   * contact's name or an object found since is filled in where it was missing. An existing
   * conversation is neither locked nor written here (only where something is filled in): the
   * count of its messages (countMessages) is the one write, late in the transaction.
   */
  async ensureConversations(db: Queryable, list: NewConversation[]): Promise<Map<string, string>> {
    const unique = [...new Map(list.map((c) => [threadOf(c), c])).values()];
    const column = <T>(pick: (c: NewConversation) => T) => unique.map(pick);
    const { rows } = await db.query<ThreadRow>(ENSURE_CONVERSATIONS, [
      column((c) => c.id),
      column((c) => c.partnerId),
      column((c) => c.workspaceId),
      column((c) => c.accountId),
      column((c) => c.network),
      column((c) => c.kind),
      column((c) => c.threadKey),
      column((c) => (c.contact ? JSON.stringify(c.contact) : null)),
      column((c) => (c.object ? JSON.stringify(c.object) : null)),
      column((c) => c.at),
    ]);
    const ids = new Map(rows.map((r) => [threadOf(r), r.id]));
    const missing = unique.filter((c) => !ids.has(threadOf(c)));
    // Created by a transaction that committed after this statement began: visible to the next one.
    if (missing.length > 0) for (const r of await this.threads(db, missing)) ids.set(threadOf(r), r.id);
    return ids;
  }

  private async threads(db: Queryable, list: NewConversation[]): Promise<ThreadRow[]> {
    const { rows } = await db.query<ThreadRow>(THREADS, [
      list.map((c) => c.accountId),
      list.map((c) => c.kind),
      list.map((c) => c.threadKey),
    ]);
    return rows;
  }

  /** Stores a message unless one with its network id is stored already; answers whether it did. */
  async insertMessage(db: Queryable, m: NewMessage): Promise<boolean> {
    return (await this.insertMessages(db, [m])).length === 1;
  }

  /**
   * Stores the messages whose network id is new for their account (a second delivery, in this
   * batch or before, stores nothing), in one statement; answers those stored, as `message` reads them.
   */
  async insertMessages(db: Queryable, list: NewMessage[]): Promise<MessageRow[]> {
    const column = <T>(pick: (m: NewMessage) => T) => list.map(pick);
    const { rows } = await db.query<MessageRow>(INSERT_MESSAGES, [
      column((m) => m.id),
      column((m) => m.conversationId),
      column((m) => m.partnerId),
      column((m) => m.workspaceId),
      column((m) => m.accountId),
      column((m) => m.direction),
      column((m) => m.kind),
      column((m) => m.platformMessageId),
      column((m) => (m.sender ? JSON.stringify(m.sender) : null)),
      column((m) => m.text),
      column((m) => JSON.stringify(m.attachments)),
      column((m) => m.parentPlatformId),
      column((m) => m.source),
      column((m) => m.state),
      column((m) => m.idempotencyKey),
      column((m) => m.requestHash),
      column((m) => m.createdAt),
      column((m) => m.storedAt),
      column((m) => (m.story ? JSON.stringify(m.story) : null)),
      column((m) => m.unsupported ?? false),
    ]);
    return rows;
  }

  /** Fills in what webhooks tell of messages stored before them (COMPLETE_MESSAGES); answers their ids. */
  async completeMessages(
    db: Queryable,
    list: {
      accountId: string;
      platformId: string;
      attachments: MessageRow['attachments'];
      story: MessageRow['replyStory'];
      unsupported: boolean;
      parentPlatformId: string | null;
    }[],
  ): Promise<string[]> {
    const { rows } = await db.query<{ id: string }>(COMPLETE_MESSAGES, [
      list.map((m) => m.accountId),
      list.map((m) => m.platformId),
      list.map((m) => JSON.stringify(m.attachments)),
      list.map((m) => (m.story ? JSON.stringify(m.story) : null)),
      list.map((m) => m.unsupported),
      list.map((m) => m.parentPlatformId),
    ]);
    return rows.map((r) => r.id);
  }

  /** Writes what a change made of a message (message-changes.ts). */
  async rewriteMessage(db: Queryable, id: string, content: MessageContent): Promise<void> {
    await db.query(REWRITE_MESSAGE, [
      id,
      content.text,
      JSON.stringify(content.attachments),
      content.replyStory ? JSON.stringify(content.replyStory) : null,
      JSON.stringify(content.reactions),
      content.hidden,
      content.editedAt,
      content.deletedAt,
    ]);
  }

  /** A read receipt of the person of a DM thread (see MARK_READ_BY_CONTACT). */
  async markReadByContact(
    db: Queryable,
    read: { accountId: string; contactId: string; mid: string | null; upTo: Date | null; at: Date },
    now: Date,
  ): Promise<void> {
    await db.query(MARK_READ_BY_CONTACT, [read.accountId, read.contactId, read.mid, read.upTo, read.at, now]);
  }

  /** A message counts in its conversation (see countMessages). */
  async countMessage(db: Queryable, conversationId: string, m: MessageCount, now: Date): Promise<void> {
    await this.countMessages(db, [{ conversationId, ...m }], now);
  }

  /**
   * Messages count in their conversations, one statement for a batch: last activity, the
   * person's window, unread. The rows are locked in id order first, so two batches never
   * deadlock. Answers the conversations as they are now.
   */
  async countMessages(
    db: Queryable,
    counts: (MessageCount & { conversationId: string })[],
    now: Date,
  ): Promise<ConversationRow[]> {
    const { rows } = await db.query<ConversationRow>(COUNT_MESSAGES, [
      counts.map((c) => c.conversationId),
      counts.map((c) => c.at),
      counts.map((c) => c.inbound),
      counts.map((c) => c.unread),
      now,
    ]);
    return rows;
  }

  /** The private reply's outcome: sent (with its message), not allowed, or free again (null). */
  async settlePrivateReply(
    db: Queryable,
    id: string,
    state: 'sent' | 'not_allowed' | null,
    replyId: string | null = null,
  ) {
    await db.query(SETTLE_PRIVATE_REPLY, [id, state, replyId]);
  }
}
