import { type Fields, selectList } from '@svc/db';
import type pg from 'pg';
import type { MessageRow } from './inbox-rows.ts';
import { MESSAGE } from './inbox-statements.ts';
import type { Queryable } from './inbox-writes.ts';

/**
 * The SQL of sends whose outcome the network decides (sender.ts, private-replies.ts,
 * send-settlement.ts): a send is stored `sending` (hidden, holding its Idempotency-Key) before
 * the network is called, and becomes `sent` with the network's id once the network's answer, its
 * echo, a reconciliation or the settlement says it went out; or it is removed when it did not.
 */

/** An account's sends still `sending` since before `before`, oldest first. */
const PENDING = `${MESSAGE}
  WHERE m.account_id = $1 AND m.platform_message_id IS NULL AND m.state = 'sending' AND m.stored_at < $2
  ORDER BY m.stored_at LIMIT $3`;

/**
 * The send went out: `sent` with the network's id and time, in the conversation the network put
 * it in (a private reply moves from its comment's thread to the person's DM thread), with the
 * network's copy of its attachments when it has them. Only while it is still `sending`.
 */
const PLACE_SENT = `UPDATE messages SET state = 'sent', platform_message_id = $2, created_at = $3,
         conversation_id = COALESCE($4, conversation_id), attachments = COALESCE($5::jsonb, attachments)
       WHERE id = $1 AND state = 'sending'`;

/**
 * A message the network shows that is one of our sends still `sending` in that conversation (the
 * oldest of that kind with the same text): the send went out, here it is. Private replies wait in
 * their comment's thread and are settled by their own code, never here.
 */
const ADOPT = `UPDATE messages SET state = 'sent', platform_message_id = $4, created_at = $5,
         attachments = COALESCE($6::jsonb, attachments)
       WHERE id = (SELECT id FROM messages WHERE conversation_id = $1 AND state = 'sending' AND kind = $2
                   AND text IS NOT DISTINCT FROM $3 ORDER BY stored_at LIMIT 1 FOR UPDATE SKIP LOCKED)
       RETURNING id`;

/** The one private reply of a comment is claimed for its message being sent. */
const CLAIM_PRIVATE_REPLY = `UPDATE messages SET private_reply_state = 'sending', private_reply_id = $2
       WHERE id = $1 AND private_reply_state IS NULL`;

/** What a dropped send tells of the comment it may have claimed (a private reply's). */
type DroppedSend = Pick<MessageRow, 'kind' | 'accountId' | 'parentPlatformId'>;
const DROPPED_FIELDS: Fields<DroppedSend> = { kind: true, accountId: true, parentPlatformId: true };

const DROP = `DELETE FROM messages WHERE id = $1 AND state = 'sending' RETURNING ${selectList(DROPPED_FIELDS)}`;

/** A private reply that did not go out frees its comment (or marks it not allowed). */
const RELEASE_COMMENT = `UPDATE messages SET private_reply_state = $3, private_reply_id = NULL
       WHERE account_id = $1 AND platform_message_id = $2 AND private_reply_state = 'sending'`;

/** A message recorded from the network that is one of our sends takes over the send's key and kind. */
const TAKE_OVER = `UPDATE messages SET idempotency_key = $2, request_hash = $3, source = $4, kind = $5,
         parent_platform_id = COALESCE($6, parent_platform_id), attachments = COALESCE($7::jsonb, attachments)
       WHERE id = $1`;

export class SendRecords {
  constructor(readonly pool: pg.Pool) {}

  async pending(accountId: string, before: Date, limit: number): Promise<MessageRow[]> {
    return (await this.pool.query<MessageRow>(PENDING, [accountId, before, limit])).rows;
  }

  /** Which of these network ids the account has stored already. */
  async stored(db: Queryable, accountId: string, platformIds: string[]): Promise<Set<string>> {
    if (platformIds.length === 0) return new Set();
    const { rows } = await db.query<{ platformMessageId: string }>(
      `SELECT platform_message_id AS "platformMessageId" FROM messages
       WHERE account_id = $1 AND platform_message_id = ANY($2::text[])`,
      [accountId, platformIds],
    );
    return new Set(rows.map((r) => r.platformMessageId));
  }

  async placeSent(
    db: Queryable,
    id: string,
    sent: {
      platformId: string | null;
      at: Date;
      conversationId?: string;
      attachments?: MessageRow['attachments'] | undefined;
    },
  ): Promise<boolean> {
    const { rowCount } = await db.query(PLACE_SENT, [
      id,
      sent.platformId,
      sent.at,
      sent.conversationId ?? null,
      attachmentsJson(sent.attachments),
    ]);
    return rowCount === 1;
  }

  async adopt(db: Queryable, found: FoundSend): Promise<string | undefined> {
    return adoptPendingSend(db, found);
  }

  /** Once the network answered with its own copy of the attachments. */
  async setAttachments(db: Queryable, id: string, attachments: MessageRow['attachments']): Promise<void> {
    await db.query('UPDATE messages SET attachments = $2::jsonb WHERE id = $1', [
      id,
      JSON.stringify(attachments),
    ]);
  }

  async claimPrivateReply(db: Queryable, commentId: string, replyId: string): Promise<boolean> {
    return (await db.query(CLAIM_PRIVATE_REPLY, [commentId, replyId])).rowCount === 1;
  }

  /**
   * A send that did not go out is removed (its key is free again); a private reply's comment is
   * freed, or marked not allowed when the network refused it for good.
   */
  async drop(db: Queryable, id: string, commentState: 'not_allowed' | null = null): Promise<void> {
    const { rows } = await db.query<DroppedSend>(DROP, [id]);
    const dropped = rows[0];
    if (dropped?.kind === 'private_reply' && dropped.parentPlatformId)
      await db.query(RELEASE_COMMENT, [dropped.accountId, dropped.parentPlatformId, commentState]);
  }

  /**
   * The network's message was recorded on its own (by its echo, or by a reconciliation) before
   * the send was settled: that record becomes the send (its key, source and kind), and the
   * `sending` one goes, so that the key answers it.
   */
  async takeOver(
    db: Queryable,
    recordedId: string,
    send: MessageRow,
    attachments?: MessageRow['attachments'],
  ): Promise<void> {
    await db.query('DELETE FROM messages WHERE id = $1', [send.id]);
    await db.query(TAKE_OVER, [
      recordedId,
      send.idempotencyKey,
      send.requestHash,
      send.source,
      send.kind,
      send.kind === 'private_reply' ? send.parentPlatformId : null,
      attachmentsJson(attachments),
    ]);
  }
}

/** A message the network shows (a reconciliation's read, an echo) that may be one of our sends. */
export interface FoundSend {
  conversationId: string;
  kind: MessageRow['kind'];
  text: string | null;
  platformId: string;
  at: Date;
  attachments: MessageRow['attachments'];
}

/**
 * Completes the send still `sending` that this message of the network is (see ADOPT), with the
 * network's id, time and copy of its files; answers its id, or undefined when none matches.
 */
export async function adoptPendingSend(db: Queryable, found: FoundSend): Promise<string | undefined> {
  const { rows } = await db.query<{ id: string }>(ADOPT, [
    found.conversationId,
    found.kind,
    found.text,
    found.platformId,
    found.at,
    attachmentsJson(found.attachments),
  ]);
  return rows[0]?.id;
}

const attachmentsJson = (attachments: MessageRow['attachments'] | undefined) =>
  attachments && attachments.length > 0 ? JSON.stringify(attachments) : null;
