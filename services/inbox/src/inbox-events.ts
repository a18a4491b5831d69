import { eventRow, makeEvent, type OutboxRow, type WorkspaceDirectory } from '@svc/bus';
import type pg from 'pg';
import type { InboxStore } from './inbox-store.ts';
import { conversationView, type MessageRow, messageView } from './views.ts';

/** The inbox events of spec section 6, each `{ conversation, message }` as REST shows them now. */
type InboxEventType = 'message.received' | 'comment.received' | 'message.sent';

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

  async announce(tx: pg.PoolClient, messageIds: string[]): Promise<OutboxRow[]> {
    const rows: OutboxRow[] = [];
    const now = this.now();
    for (const id of messageIds) {
      const message = await this.store.messageById(tx, id);
      const conversation = await this.store.conversationById(tx, message.conversation_id);
      const scope = await this.workspaces.scope(message.workspace_id);
      const data = { conversation: conversationView(conversation, now), message: messageView(message, now) };
      rows.push(eventRow(makeEvent(typeOf(message), scope, data, now)));
    }
    return rows;
  }
}
