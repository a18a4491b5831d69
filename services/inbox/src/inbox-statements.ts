import { type Caller, selectList } from '@svc/db';
import { CONVERSATION_FIELDS, type ConversationFilter, MESSAGE_FIELDS, THREAD_FIELDS } from './inbox-rows.ts';

/**
 * The inbox store's longer SQL statements (see InboxStore), kept apart so the store reads as what
 * it does. Unqualified names resolve in the `inbox` schema (the pool's search_path). Rows come
 * back under the fields of their types (inbox-rows.ts).
 */
/** A conversation with our post id: the object's, as published by the conversation's own account. */
const CONVERSATION_FROM = `FROM conversations c
  LEFT JOIN published_objects po
    ON c.kind = 'comments' AND po.account_id = c.account_id AND po.platform_id = c.thread_key`;
const CONVERSATION_COLUMNS = selectList(CONVERSATION_FIELDS, { table: 'c' });
export const CONVERSATION = `SELECT ${CONVERSATION_COLUMNS} ${CONVERSATION_FROM}`;
/** CONVERSATION with the count of the whole list (`total`) on each row. */
export const CONVERSATION_PAGE = `SELECT ${CONVERSATION_COLUMNS}, count(*) OVER () AS total ${CONVERSATION_FROM}`;

const MESSAGE_FROM = `FROM messages m
  LEFT JOIN messages p ON p.account_id = m.account_id AND p.platform_message_id = m.parent_platform_id
  LEFT JOIN messages pr ON pr.id = m.private_reply_id`;
const MESSAGE_COLUMNS = selectList(MESSAGE_FIELDS, { table: 'm' });
export const MESSAGE = `SELECT ${MESSAGE_COLUMNS} ${MESSAGE_FROM}`;
/** MESSAGE with the count of the whole list (`total`) on each row. */
export const MESSAGE_PAGE = `SELECT ${MESSAGE_COLUMNS}, count(*) OVER () AS total ${MESSAGE_FROM}`;

/** A caller's scope as SQL: partner, and the workspace of a workspace key. */
export const IN_SCOPE = (alias: string, partner: string, workspace: string) =>
  `${alias}.partner_id = ${partner} AND (${workspace} = '' OR ${alias}.workspace_id = ${workspace})`;

export const ENSURE_CONVERSATIONS = `WITH input AS (
         SELECT * FROM unnest($1::text[], $2::text[], $3::text[], $4::text[], $5::text[], $6::text[],
           $7::text[], $8::jsonb[], $9::jsonb[], $10::timestamptz[]) AS i(id, p, w, a, n, k, t, contact, object, at)
       ), inserted AS (
         INSERT INTO conversations (id, partner_id, workspace_id, account_id, network, kind, thread_key,
           contact, object, created_at, updated_at)
         SELECT id, p, w, a, n, k, t, contact, object, at, at FROM input
         ON CONFLICT (account_id, kind, thread_key) DO NOTHING
         RETURNING id, account_id, kind, thread_key
       ), filled AS (
         UPDATE conversations c SET
           contact = CASE WHEN c.contact->>'name' IS NULL AND i.contact->>'name' IS NOT NULL
                          THEN i.contact ELSE c.contact END,
           object = COALESCE(c.object, i.object)
         FROM input i
         WHERE c.account_id = i.a AND c.kind = i.k AND c.thread_key = i.t
           AND ((c.contact->>'name' IS NULL AND i.contact->>'name' IS NOT NULL)
             OR (c.object IS NULL AND i.object IS NOT NULL))
       )
       SELECT ${selectList(THREAD_FIELDS)} FROM inserted
       UNION ALL
       SELECT ${selectList(THREAD_FIELDS, { table: 'c' })} FROM conversations c
         JOIN input i ON c.account_id = i.a AND c.kind = i.k AND c.thread_key = i.t`;

export const THREADS = `SELECT ${selectList(THREAD_FIELDS, { table: 'c' })} FROM conversations c
       JOIN unnest($1::text[], $2::text[], $3::text[]) AS i(a, k, t)
         ON c.account_id = i.a AND c.kind = i.k AND c.thread_key = i.t`;

/** A message just inserted, as MESSAGE reads it: its parent looked up, no private reply yet. */
const INSERTED_MESSAGE_COLUMNS = selectList(
  {
    ...MESSAGE_FIELDS,
    parentId: `(SELECT p.id FROM messages p
      WHERE p.account_id = m.account_id AND p.platform_message_id = m.parent_platform_id)`,
    privateReplyText: 'NULL::text',
  },
  { table: 'm' },
);

export const INSERT_MESSAGES = `INSERT INTO messages AS m (id, conversation_id, partner_id, workspace_id, account_id, direction, kind,
         platform_message_id, sender, text, attachments, parent_platform_id, source, state,
         idempotency_key, request_hash, created_at, stored_at, reply_story, unsupported)
       SELECT * FROM unnest($1::text[], $2::text[], $3::text[], $4::text[], $5::text[], $6::text[], $7::text[],
         $8::text[], $9::jsonb[], $10::text[], $11::jsonb[], $12::text[], $13::text[], $14::text[],
         $15::text[], $16::text[], $17::timestamptz[], $18::timestamptz[], $19::jsonb[], $20::bool[])
       ON CONFLICT (account_id, platform_message_id) DO NOTHING
       RETURNING ${INSERTED_MESSAGE_COLUMNS}`;

/** A conversation just updated, as CONVERSATION reads it, its post looked up. */
const COUNTED_CONVERSATION_COLUMNS = selectList(
  {
    ...CONVERSATION_FIELDS,
    postId: `(SELECT po.post_id FROM published_objects po
      WHERE c.kind = 'comments' AND po.account_id = c.account_id AND po.platform_id = c.thread_key)`,
  },
  { table: 'c' },
);

export const COUNT_MESSAGES = `WITH locked AS (SELECT id FROM conversations WHERE id = ANY($1::text[]) ORDER BY id FOR UPDATE)
       UPDATE conversations c SET
         last_message_at = GREATEST(c.last_message_at, n.last_at),
         last_inbound_at = GREATEST(c.last_inbound_at, n.inbound_at),
         unread_count = c.unread_count + n.unread,
         updated_at = $5
       FROM (SELECT id, max(at) AS last_at, max(at) FILTER (WHERE inbound) AS inbound_at,
                    count(*) FILTER (WHERE unread)::int AS unread
             FROM unnest($1::text[], $2::timestamptz[], $3::bool[], $4::bool[]) AS x(id, at, inbound, unread)
             GROUP BY id) n
       WHERE c.id = n.id AND c.id IN (SELECT id FROM locked)
       RETURNING ${COUNTED_CONVERSATION_COLUMNS}`;

/**
 * What a DM's webhook tells of a message stored before it came (Intake.completeMessages): only
 * what is missing is filled in, and nothing of a message unsent since. Answers those it filled.
 */
export const COMPLETE_MESSAGES = `UPDATE messages m SET
         attachments = CASE WHEN m.attachments = '[]'::jsonb THEN i.attachments ELSE m.attachments END,
         reply_story = COALESCE(m.reply_story, i.story),
         unsupported = m.unsupported OR i.unsupported,
         parent_platform_id = COALESCE(m.parent_platform_id, i.parent)
       FROM unnest($1::text[], $2::text[], $3::jsonb[], $4::jsonb[], $5::bool[], $6::text[])
         AS i(a, p, attachments, story, unsupported, parent)
       WHERE m.account_id = i.a AND m.platform_message_id = i.p AND m.deleted_at IS NULL
         AND ((m.attachments = '[]'::jsonb AND i.attachments <> '[]'::jsonb)
           OR (m.reply_story IS NULL AND i.story IS NOT NULL)
           OR (NOT m.unsupported AND i.unsupported)
           OR (m.parent_platform_id IS NULL AND i.parent IS NOT NULL))
       RETURNING m.id`;

/** A stored message by its network id, locked for a change (message-changes.ts). */
export const LOCK_MESSAGE = `${MESSAGE} WHERE m.account_id = $1 AND m.platform_message_id = $2 FOR UPDATE OF m`;

export const REWRITE_MESSAGE = `UPDATE messages SET text = $2, attachments = $3, reply_story = $4, reactions = $5,
         hidden = $6, edited_at = $7, deleted_at = $8
       WHERE id = $1`;

/**
 * A read receipt: the person has seen the account's messages up to a time (Messenger's watermark),
 * or up to one message (Instagram's mid: its time when stored, else the receipt's). Only forward.
 */
export const MARK_READ_BY_CONTACT = `UPDATE conversations c SET read_by_contact_at = x.at, updated_at = $6
       FROM (SELECT COALESCE($4::timestamptz,
               (SELECT m.created_at FROM messages m WHERE m.account_id = $1 AND m.platform_message_id = $3),
               $5::timestamptz) AS at) x
       WHERE c.account_id = $1 AND c.kind = 'dm' AND c.thread_key = $2
         AND (c.read_by_contact_at IS NULL OR c.read_by_contact_at < x.at)`;

export const INSERT_PUBLISHED_OBJECTS = `INSERT INTO published_objects
         (account_id, platform_id, post_id, workspace_id)
       SELECT * FROM unnest($1::text[], $2::text[], $3::text[], $4::text[]) ON CONFLICT DO NOTHING`;

/** A workspace's inbox, messages first (they reference conversations), and what imports knew. */
export const PURGE_WORKSPACE = [
  'DELETE FROM messages WHERE conversation_id IN (SELECT id FROM conversations WHERE workspace_id = $1)',
  'DELETE FROM conversations WHERE workspace_id = $1',
  'DELETE FROM published_objects WHERE workspace_id = $1',
  'DELETE FROM account_imports WHERE workspace_id = $1',
];

export const UPDATE_CONVERSATION = `UPDATE conversations SET
         unread_count = CASE WHEN $2 THEN 0 ELSE unread_count END,
         archived = COALESCE($3, archived),
         updated_at = $4
       WHERE id = $1`;

/** The WHERE conditions of a conversation list (alias `c`) and their values, in order. */
export function conversationConditions(caller: Caller, filter: ConversationFilter) {
  const where = [IN_SCOPE('c', '$1', '$2')];
  const values: unknown[] = [caller.partnerId, caller.workspaceId ?? ''];
  const add = (sql: (p: string) => string, value: unknown) => {
    values.push(value);
    where.push(sql(`$${values.length}`));
  };
  if (filter.workspaceId) add((p) => `c.workspace_id = ${p}`, filter.workspaceId);
  if (filter.accountId) add((p) => `c.account_id = ${p}`, filter.accountId);
  if (filter.kind) add((p) => `c.kind = ${p}`, filter.kind);
  if (filter.unread !== undefined) add((p) => `(c.unread_count > 0) = ${p}`, filter.unread);
  if (filter.archived !== undefined) add((p) => `c.archived = ${p}`, filter.archived);
  if (filter.since) add((p) => `c.last_message_at > ${p}`, filter.since);
  return { where, values };
}

export const SETTLE_PRIVATE_REPLY = `UPDATE messages SET private_reply_state = $2, private_reply_id = $3
       WHERE id = $1`;
