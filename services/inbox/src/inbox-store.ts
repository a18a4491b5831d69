import { type OutboxRelay, type OutboxRow, writeOutbox } from '@svc/bus';
import { type Caller, transaction } from '@svc/db';
import { errors } from '@svc/errors';
import type pg from 'pg';
import { afterPosition } from './conversation-cursor.ts';
import type { ConversationFilter, ConversationRow, MessageRow } from './inbox-rows.ts';
import {
  CONVERSATION,
  CONVERSATION_PAGE,
  conversationConditions,
  IN_SCOPE,
  INSERT_PUBLISHED_OBJECTS,
  LOCK_MESSAGE,
  MESSAGE,
  MESSAGE_PAGE,
  PURGE_WORKSPACE,
  UPDATE_CONVERSATION,
} from './inbox-statements.ts';
import { InboxWrites, type Queryable } from './inbox-writes.ts';

/**
 * Every SQL statement on conversations, messages and published objects, and their outbox rows:
 * the transaction and the reads here, what a transaction records in InboxWrites (inbox-writes.ts).
 */
export class InboxStore extends InboxWrites {
  constructor(
    readonly pool: pg.Pool,
    private readonly relay: OutboxRelay,
  ) {
    super();
  }

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
      `${CONVERSATION_PAGE}
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
      `${MESSAGE_PAGE}
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

  /** The message of an account with this network id, locked until the transaction ends. */
  async lockMessage(db: Queryable, accountId: string, platformId: string): Promise<MessageRow | undefined> {
    const { rows } = await db.query<MessageRow>(LOCK_MESSAGE, [accountId, platformId]);
    return rows[0];
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
