import { eventRow, makeEvent, type OutboxRow } from '@svc/bus';
import type { WorkspaceDirectory } from '@svc/directory';
import type pg from 'pg';
import type { ConversationRow, MessageRow } from './inbox-rows.ts';
import type { InboxStore } from './inbox-store.ts';
import { conversationView, messageView } from './views.ts';

/** Messages just stored and their conversations as they are now, in the same transaction. */
export interface Recorded {
  messages: MessageRow[];
  conversations: ConversationRow[];
}

/**
 * The inbox events of spec section 6, each `{ conversation, message }` as REST shows them now;
 * `message.updated` when a stored message changed (edited, unsent or removed, hidden, reacted to).
 */
type InboxEventType = 'message.received' | 'comment.received' | 'message.sent' | 'message.updated';

function typeOf(message: Pick<MessageRow, 'direction' | 'kind'>): InboxEventType {
  if (message.direction === 'outbound') return 'message.sent';
  return message.kind === 'message' ? 'message.received' : 'comment.received';
}

/** Builds the outbox rows that announce messages just recorded, read inside their transaction. */
export class InboxEvents {
  constructor(
    private readonly store: InboxStore,
    private readonly workspaces: WorkspaceDirectory,
    private readonly now: () => Date,
  ) {}

  /** The events of a batch just stored, built from what the statements answered (no reads). */
  async announceRecorded({ messages, conversations }: Recorded): Promise<OutboxRow[]> {
    const byId = new Map(conversations.map((c) => [c.id, c]));
    const now = this.now();
    const rows: OutboxRow[] = [];
    for (const message of messages) {
      const conversation = byId.get(message.conversationId);
      if (!conversation) continue;
      rows.push(await this.eventRow(conversation, message, now));
    }
    return rows;
  }

  /** The events of messages just recorded (or, with `message.updated`, just changed), read inside their transaction. */
  async announce(tx: pg.PoolClient, messageIds: string[], type?: 'message.updated'): Promise<OutboxRow[]> {
    const rows: OutboxRow[] = [];
    const now = this.now();
    for (const id of messageIds) {
      const message = await this.store.messageById(tx, id);
      const conversation = await this.store.conversationById(tx, message.conversationId);
      rows.push(await this.eventRow(conversation, message, now, type));
    }
    return rows;
  }

  private async eventRow(
    conversation: ConversationRow,
    message: MessageRow,
    now: Date,
    type: InboxEventType = typeOf(message),
  ): Promise<OutboxRow> {
    const scope = await this.workspaces.scope(message.workspaceId);
    const data = { conversation: conversationView(conversation, now), message: messageView(message, now) };
    return eventRow(makeEvent(type, scope, data, now));
  }
}
