import type { ConversationView, MessageView, Network } from '@svc/contracts/public';

/**
 * Rows as the inbox store reads them, and the public shapes built from them: the one place a
 * conversation or a message becomes what partners see (REST answers and event payloads alike).
 */
export interface ConversationRow {
  id: string;
  partner_id: string;
  workspace_id: string;
  account_id: string;
  network: Network;
  kind: 'dm' | 'comments';
  thread_key: string;
  contact: ConversationView['contact'];
  object: { id: string; permalink: string | null; caption: string | null } | null;
  /** Our post id when the commented object is one of our posts (joined from published_objects). */
  post_id: string | null;
  last_message_at: Date | null;
  last_inbound_at: Date | null;
  read_by_contact_at: Date | null;
  unread_count: number;
  archived: boolean;
  created_at: Date;
  updated_at: Date;
}

export interface MessageRow {
  id: string;
  conversation_id: string;
  partner_id: string;
  workspace_id: string;
  account_id: string;
  direction: 'inbound' | 'outbound';
  kind: MessageView['kind'];
  platform_message_id: string | null;
  sender: MessageView['from'];
  text: string | null;
  attachments: MessageView['attachments'];
  parent_platform_id: string | null;
  /** The `msg_` id of the comment a reply answers or the DM a DM replies to (joined), when stored. */
  parent_id: string | null;
  reply_story: MessageView['story'];
  unsupported: boolean;
  reactions: MessageView['reactions'];
  hidden: boolean;
  edited_at: Date | null;
  deleted_at: Date | null;
  source: MessageView['source'];
  state: 'sending' | 'sent';
  private_reply_state: 'sending' | 'sent' | 'not_allowed' | null;
  private_reply_id: string | null;
  request_hash: string | null;
  /** The text of the private reply sent (joined). */
  private_reply_text: string | null;
  created_at: Date;
  stored_at: Date;
}

const HOUR_MS = 3_600_000;
/** Meta's standard messaging window after the person's last message (facts §4.4). */
export const STANDARD_WINDOW_MS = 24 * HOUR_MS;
/** The HUMAN_AGENT tag's window, and the private reply's window after a comment. */
export const SEVEN_DAYS_MS = 7 * 24 * HOUR_MS;

const iso = (at: Date | null) => (at ? at.toISOString() : null);
const after = (at: Date | null, ms: number) => (at ? new Date(at.getTime() + ms) : null);

export function conversationView(row: ConversationRow, now: Date): ConversationView {
  return {
    id: row.id,
    workspace: row.workspace_id,
    account: row.account_id,
    network: row.network,
    kind: row.kind,
    contact: row.kind === 'dm' ? row.contact : null,
    object: row.object ? { ...row.object, post: row.post_id } : null,
    last_message_at: iso(row.last_message_at),
    read_by_contact_at: row.kind === 'dm' ? iso(row.read_by_contact_at) : null,
    unread_count: row.unread_count,
    archived: row.archived,
    reply_window: row.kind === 'dm' ? replyWindow(row.last_inbound_at, now) : null,
    created: row.created_at.toISOString(),
    updated: row.updated_at.toISOString(),
  };
}

function replyWindow(lastInboundAt: Date | null, now: Date): ConversationView['reply_window'] {
  const closesAt = after(lastInboundAt, STANDARD_WINDOW_MS);
  return {
    open: closesAt !== null && now < closesAt,
    closes_at: iso(closesAt),
    human_agent_until: iso(after(lastInboundAt, SEVEN_DAYS_MS)),
  };
}

export function messageView(row: MessageRow, now: Date): MessageView {
  return {
    id: row.id,
    conversation: row.conversation_id,
    workspace: row.workspace_id,
    direction: row.direction,
    kind: row.kind,
    platform_message_id: row.platform_message_id,
    from: row.sender,
    text: row.text,
    attachments: row.attachments,
    parent: row.parent_id,
    story: row.reply_story,
    unsupported: row.unsupported,
    reactions: row.reactions,
    edited_at: iso(row.edited_at),
    deleted_at: iso(row.deleted_at),
    hidden: row.hidden,
    source: row.direction === 'outbound' ? row.source : null,
    private_reply: takesPrivateReply(row) ? privateReply(row, now) : null,
    created_at: row.created_at.toISOString(),
    created: row.stored_at.toISOString(),
  };
}

/** Inbound comments and replies can get one private reply; nothing else can. */
function takesPrivateReply(row: Pick<MessageRow, 'direction' | 'kind'>): boolean {
  return row.direction === 'inbound' && (row.kind === 'comment' || row.kind === 'reply');
}

export function privateReply(row: MessageRow, now: Date): NonNullable<MessageView['private_reply']> {
  const availableUntil = new Date(row.created_at.getTime() + SEVEN_DAYS_MS);
  const message = row.private_reply_text;
  if (row.private_reply_state === 'sent') return { state: 'sent', available_until: null, message };
  if (row.private_reply_state === 'not_allowed')
    return { state: 'not_allowed', available_until: null, message: null };
  if (now >= availableUntil) return { state: 'expired', available_until: null, message: null };
  return { state: 'available', available_until: availableUntil.toISOString(), message: null };
}
