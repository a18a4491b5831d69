import { type OutboxRelay, type OutboxRow, writeOutbox } from '@svc/bus';
import { type Caller, transaction } from '@svc/db';
import { errors } from '@svc/errors';
import type pg from 'pg';
import { afterPosition } from './conversation-cursor.ts';
import type { ConversationFilter, MessageCount, NewConversation, NewMessage } from './inbox-rows.ts';
import { threadOf } from './inbox-rows.ts';
import {
  ADOPT_SENDING,
  CLAIM_PRIVATE_REPLY,
  COMPLETE_MESSAGES,
  CONVERSATION,
  COUNT_MESSAGES,
  conversationConditions,
  ENSURE_CONVERSATIONS,
  IN_SCOPE,
  INSERT_MESSAGES,
  INSERT_PUBLISHED_OBJECTS,
  LOCK_MESSAGE,
  MARK_READ_BY_CONTACT,
  MARK_SENT,
  MESSAGE,
  PURGE_WORKSPACE,
  REWRITE_MESSAGE,
  SETTLE_PRIVATE_REPLY,
  THREADS,
  UPDATE_CONVERSATION,
} from './inbox-statements.ts';
import type { MessageContent } from './message-changes.ts';
import type { ConversationRow, MessageRow } from './views.ts';

type Queryable = Pick<pg.ClientBase, 'query'>;

interface ThreadRow {
  id: string;
  account_id: string;
  kind: string;
  thread_key: string;
}

/**
 * Every SQL statement on conversations, messages and published objects, and their outbox rows.
 * A conversation is one per (account, kind, thread key); a message is one per (account, network
 * id), which is what makes a webhook delivered twice, or an import run twice, record nothing new.
 */
export class InboxStore {
  constructor(
    readonly pool: pg.Pool,
    private readonly relay: OutboxRelay,
  ) {}

  /** Runs `work` in one transaction, then publishes the outbox rows it answers. */
  async write<T>(work: (tx: pg.PoolClient) => Promise<{ result: T; events: OutboxRow[] }>): Promise<T> {
    const { result, events } = await transaction(this.pool, async (tx) => {
      const done = await work(tx);
      await writeOutbox(tx, done.events);
      return done;
    });
    if (events.length > 0) void this.relay.publishCommitted(events).catch(() => this.relay.kick());
    return result;
  }

  async conversation(caller: Caller, id: string, db: Queryable = this.pool): Promise<ConversationRow> {
    const { rows } = await db.query<ConversationRow>(
      `${CONVERSATION} WHERE c.id = $1 AND ${IN_SCOPE('c', '$2', '$3')}`,
      [id, caller.partnerId, caller.workspaceId ?? ''],
    );
    if (!rows[0]) throw errors.notFound('conversation');
    return rows[0];
  }

  async conversationById(db: Queryable, id: string): Promise<ConversationRow> {
    const { rows } = await db.query<ConversationRow>(`${CONVERSATION} WHERE c.id = $1`, [id]);
    if (!rows[0]) throw errors.notFound('conversation');
    return rows[0];
  }

  /**
   * Newest activity first, as an inbox shows them: a page by offset (`page`), or the page after a
   * position (`after`, see conversation-cursor.ts). One row more than the page is read, to tell
   * whether more follow; `total` counts the whole list.
   */
  async conversations(caller: Caller, filter: ConversationFilter) {
    const { where, values } = conversationConditions(caller, filter);
    const filtered = { where: [...where], values: [...values] };
    if (filter.after) where.push(afterPosition(filter.after, values));
    const offset = filter.after ? 0 : (filter.page - 1) * filter.limit;
    values.push(filter.limit + 1, offset);
    const { rows } = await this.pool.query<ConversationRow & { total: string }>(
      `${CONVERSATION.replace('SELECT c.*', 'SELECT c.*, count(*) OVER () AS total')}
       WHERE ${where.join(' AND ')}
       ORDER BY c.last_message_at DESC NULLS LAST, c.id DESC
       LIMIT $${values.length - 1} OFFSET $${values.length}`,
      values,
    );
    const page = rows.slice(0, filter.limit);
    // Without a position the window count is the whole list's; after one it counts the rest only.
    const total =
      rows[0] && !filter.after
        ? Number(rows[0].total)
        : await this.countConversations(filtered.where, filtered.values);
    return { rows: page, total, hasMore: rows.length > filter.limit };
  }

  /** The whole list's count (a page past the end, or after a position, has no window count of it). */
  private async countConversations(where: string[], values: unknown[]): Promise<number> {
    const { rows } = await this.pool.query<{ n: string }>(
      `SELECT count(*) AS n FROM conversations c WHERE ${where.join(' AND ')}`,
      values,
    );
    return Number(rows[0]?.n ?? 0);
  }

  async updateConversation(id: string, change: { read: boolean; archived?: boolean | undefined }, now: Date) {
    await this.pool.query(UPDATE_CONVERSATION, [id, change.read, change.archived ?? null, now]);
  }

  /** Oldest first; messages still being sent are not shown. */
  async messages(conversationId: string, query: { since: Date | undefined; page: number; limit: number }) {
    const { rows } = await this.pool.query<MessageRow & { total: string }>(
      `${MESSAGE.replace('SELECT m.*', 'SELECT m.*, count(*) OVER () AS total')}
       WHERE m.conversation_id = $1 AND m.state = 'sent' AND ($2::timestamptz IS NULL OR m.created_at > $2)
       ORDER BY m.created_at, m.id LIMIT $3 OFFSET $4`,
      [conversationId, query.since ?? null, query.limit, (query.page - 1) * query.limit],
    );
    return { rows, total: rows[0] ? Number(rows[0].total) : 0 };
  }

  async message(caller: Caller, id: string): Promise<MessageRow> {
    const { rows } = await this.pool.query<MessageRow>(
      `${MESSAGE} WHERE m.id = $1 AND m.state = 'sent' AND ${IN_SCOPE('m', '$2', '$3')}`,
      [id, caller.partnerId, caller.workspaceId ?? ''],
    );
    if (!rows[0]) throw errors.notFound('message');
    return rows[0];
  }

  async messageById(db: Queryable, id: string): Promise<MessageRow> {
    const { rows } = await db.query<MessageRow>(`${MESSAGE} WHERE m.id = $1`, [id]);
    if (!rows[0]) throw errors.notFound('message');
    return rows[0];
  }

  /** The message of an account with this network id, if stored. */
  async messageByPlatformId(db: Queryable, accountId: string, platformId: string) {
    const { rows } = await db.query<MessageRow>(
      `${MESSAGE} WHERE m.account_id = $1 AND m.platform_message_id = $2`,
      [accountId, platformId],
    );
    return rows[0];
  }

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
    const ids = new Map(rows.map((r) => [`${r.account_id}:${r.kind}:${r.thread_key}`, r.id]));
    const missing = unique.filter((c) => !ids.has(threadOf(c)));
    // Created by a transaction that committed after this statement began: visible to the next one.
    if (missing.length > 0)
      for (const r of await this.threads(db, missing))
        ids.set(`${r.account_id}:${r.kind}:${r.thread_key}`, r.id);
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
      story: MessageRow['reply_story'];
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

  /** The message of an account with this network id, locked until the transaction ends. */
  async lockMessage(db: Queryable, accountId: string, platformId: string): Promise<MessageRow | undefined> {
    const { rows } = await db.query<MessageRow>(LOCK_MESSAGE, [accountId, platformId]);
    return rows[0];
  }

  /** Writes what a change made of a message (message-changes.ts). */
  async rewriteMessage(db: Queryable, id: string, content: MessageContent): Promise<void> {
    await db.query(REWRITE_MESSAGE, [
      id,
      content.text,
      JSON.stringify(content.attachments),
      content.reply_story ? JSON.stringify(content.reply_story) : null,
      JSON.stringify(content.reactions),
      content.hidden,
      content.edited_at,
      content.deleted_at,
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

  /**
   * A message being sent becomes sent with the network's id; false when it no longer is (the
   * network's echo got there first and did it).
   */
  async markSent(db: Queryable, id: string, platformMessageId: string, at: Date): Promise<boolean> {
    const { rowCount } = await db.query(MARK_SENT, [id, platformMessageId, at]);
    return rowCount === 1;
  }

  /**
   * The echo of a message we are sending, seen before the network's answer to our send: the
   * oldest one being sent in this conversation with the same text.
   */
  async adoptSending(db: Queryable, conversationId: string, text: string | null, platformId: string) {
    const { rows } = await db.query<{ id: string }>(ADOPT_SENDING, [conversationId, text, platformId]);
    return rows[0]?.id;
  }

  /** A send the network refused: nothing was sent, so nothing is kept (the key is free again). */
  async dropSending(id: string): Promise<void> {
    await this.pool.query(`DELETE FROM messages WHERE id = $1 AND state = 'sending'`, [id]);
  }

  /** The message sent earlier under this key by this partner, if any. */
  async byIdempotencyKey(partnerId: string, key: string) {
    const { rows } = await this.pool.query<MessageRow>(
      `${MESSAGE} WHERE m.partner_id = $1 AND m.idempotency_key = $2`,
      [partnerId, key],
    );
    return rows[0];
  }

  /** Claims a comment's one private reply; false when it is taken (being sent or sent). */
  async claimPrivateReply(id: string): Promise<boolean> {
    const { rowCount } = await this.pool.query(CLAIM_PRIVATE_REPLY, [id]);
    return rowCount === 1;
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

  /** Our posts' network objects, each under the account that published it. */
  async recordPublishedObjects(
    objects: { accountId: string; platformId: string; postId: string; workspaceId: string }[],
  ) {
    if (objects.length === 0) return;
    await this.pool.query(INSERT_PUBLISHED_OBJECTS, [
      objects.map((o) => o.accountId),
      objects.map((o) => o.platformId),
      objects.map((o) => o.postId),
      objects.map((o) => o.workspaceId),
    ]);
  }

  /** `workspace.deleted`: its conversations, messages, published objects and import marks go. */
  async purgeWorkspace(workspaceId: string): Promise<void> {
    await transaction(this.pool, async (tx) => {
      for (const statement of PURGE_WORKSPACE) await tx.query(statement, [workspaceId]);
    });
  }
}
