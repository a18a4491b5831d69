import type { ConversationView, MessageView } from '@svc/contracts/public';
import type { ConversationRow, MessageRow } from './inbox-rows.ts';

/**
 * The public shapes of the inbox store's rows (inbox-rows.ts): the one place a conversation or a
 * message becomes what partners see (REST answers and event payloads alike).
 */

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
    workspace: row.workspaceId,
    account: row.accountId,
    network: row.network,
    kind: row.kind,
    contact: row.kind === 'dm' ? row.contact : null,
    object: row.object ? { ...row.object, post: row.postId } : null,
    last_message_at: iso(row.lastMessageAt),
    read_by_contact_at: row.kind === 'dm' ? iso(row.readByContactAt) : null,
    unread_count: row.unreadCount,
    archived: row.archived,
    reply_window: row.kind === 'dm' ? replyWindow(row.lastInboundAt, now) : null,
    created: row.createdAt.toISOString(),
    updated: row.updatedAt.toISOString(),
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
    conversation: row.conversationId,
    workspace: row.workspaceId,
    direction: row.direction,
    kind: row.kind,
    platform_message_id: row.platformMessageId,
    from: row.sender,
    text: row.text,
    attachments: row.attachments,
    parent: row.parentId,
    story: row.replyStory,
    unsupported: row.unsupported,
    reactions: row.reactions,
    edited_at: iso(row.editedAt),
    deleted_at: iso(row.deletedAt),
    hidden: row.hidden,
    source: row.direction === 'outbound' ? row.source : null,
    private_reply: takesPrivateReply(row) ? privateReply(row, now) : null,
    created_at: row.createdAt.toISOString(),
    created: row.storedAt.toISOString(),
  };
}

/** Inbound comments and replies can get one private reply; nothing else can. */
function takesPrivateReply(row: Pick<MessageRow, 'direction' | 'kind'>): boolean {
  return row.direction === 'inbound' && (row.kind === 'comment' || row.kind === 'reply');
}

export function privateReply(row: MessageRow, now: Date): NonNullable<MessageView['private_reply']> {
  const availableUntil = new Date(row.createdAt.getTime() + SEVEN_DAYS_MS);
  const message = row.privateReplyText;
  if (row.privateReplyState === 'sent') return { state: 'sent', available_until: null, message };
  if (row.privateReplyState === 'not_allowed')
    return { state: 'not_allowed', available_until: null, message: null };
  if (now >= availableUntil) return { state: 'expired', available_until: null, message: null };
  return { state: 'available', available_until: availableUntil.toISOString(), message: null };
}
