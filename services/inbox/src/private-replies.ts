import type { MessageView } from '@svc/contracts/public';
import type { Caller } from '@svc/db';
import { errors, ServiceError } from '@svc/errors';
import { GraphApiError, type GraphClient } from '@svc/graph-client';
import { newId } from '@svc/ids';
import type { AccountsDirectory } from './accounts-directory.ts';
import { earlierSend, type Idempotency } from './idempotent-sends.ts';
import type { InboxEvents } from './inbox-events.ts';
import type { NewConversation, NewMessage } from './inbox-rows.ts';
import type { InboxStore } from './inbox-store.ts';
import { checkText } from './text-limits.ts';
import { type MessageRow, messageView, privateReply } from './views.ts';

/** What the network answered to the send. */
type SentReply = { recipient_id?: string | undefined; message_id?: string | undefined };

/** The network's refusal of a comment that cannot take a private reply (facts §4.4). */
const NOT_VALID_FOR_PRIVATE_REPLY = 2534025;

export interface PrivateReplyRequest {
  messageId: string;
  text: string;
  source: 'api' | 'widget' | 'mcp';
  idempotency?: Idempotency | undefined;
}

/**
 * The one private reply (a DM through `recipient.comment_id`) the network allows to an inbound
 * comment within 7 days. The comment is claimed first (`private_reply_state`), so two requests
 * cannot both send; the DM then lands in the commenter's DM conversation, created if new.
 */
export class PrivateReplies {
  constructor(
    private readonly deps: {
      store: InboxStore;
      accounts: AccountsDirectory;
      graph: GraphClient;
      events: InboxEvents;
      now: () => Date;
    },
  ) {}

  async send(caller: Caller, req: PrivateReplyRequest): Promise<{ message: MessageView; replayed: boolean }> {
    const { store, now } = this.deps;
    const earlier = await earlierSend(store, caller.partnerId, req.idempotency);
    if (earlier) return { message: messageView(earlier, now()), replayed: true };
    const comment = await store.message(caller, req.messageId);
    this.checkAllowed(comment);
    const account = await this.deps.accounts.visible(caller, comment.account_id);
    checkText(req.text, account.network, 'dm');
    if (!(await store.claimPrivateReply(comment.id)))
      throw errors.conflict('this comment already has its private reply (sent or being sent)');
    let sent: SentReply;
    try {
      const token = await this.deps.accounts.token(account.id);
      const commentId = comment.platform_message_id ?? '';
      sent = await this.deps.graph.inbox.privateReply(token, account.pageId, { commentId, text: req.text });
    } catch (error) {
      const refused = error instanceof GraphApiError && error.graph.subcode === NOT_VALID_FOR_PRIVATE_REPLY;
      await store.settlePrivateReply(store.pool, comment.id, refused ? 'not_allowed' : null);
      if (error instanceof GraphApiError) await this.deps.accounts.reportTokenProblem(account.id, error);
      throw error;
    }
    const id = await this.record(comment, account.network, req, sent);
    return { message: messageView(await store.messageById(store.pool, id), now()), replayed: false };
  }

  private checkAllowed(comment: MessageRow): void {
    if (comment.kind === 'message' || comment.kind === 'private_reply')
      throw new ServiceError('unsupported', 'a private reply answers a comment; this is a direct message');
    if (comment.direction === 'outbound')
      throw errors.conflict("a private reply answers someone else's comment, not the account's own");
    const state = privateReply(comment, this.deps.now()).state;
    if (state === 'sent') throw errors.conflict('this comment already has its private reply');
    if (state === 'expired')
      throw errors.conflict('a private reply can be sent within 7 days of the comment; this one is older');
    if (state === 'not_allowed')
      throw errors.conflict('the network does not allow a private reply to this comment');
  }

  /** The DM in the commenter's conversation, the comment marked answered, and message.sent. */
  private async record(
    comment: MessageRow,
    network: string,
    req: PrivateReplyRequest,
    sent: SentReply,
  ): Promise<string> {
    const { store, events, now } = this.deps;
    return store.write(async (tx) => {
      const conversationId = await store.ensureConversation(
        tx,
        this.commenterConversation(comment, network, sent),
      );
      const reply = this.replyMessage(comment, conversationId, req, sent);
      const inserted = await store.insertMessage(tx, reply);
      // Its echo got here first and recorded it: that one is the private reply.
      const platformId = reply.platformMessageId;
      const replyId = inserted
        ? reply.id
        : ((platformId && (await store.messageByPlatformId(tx, comment.account_id, platformId))?.id) ??
          reply.id);
      await store.settlePrivateReply(tx, comment.id, 'sent', replyId);
      if (!inserted) return { result: replyId, events: [] };
      await store.countMessage(tx, conversationId, { at: now(), inbound: false, unread: false }, now());
      return { result: reply.id, events: await events.announce(tx, [reply.id]) };
    });
  }

  /** The commenter's DM conversation, where the network puts a private reply. */
  private commenterConversation(comment: MessageRow, network: string, sent: SentReply): NewConversation {
    const contactId = sent.recipient_id ?? comment.sender?.id ?? '';
    return {
      id: newId('conversation'),
      partnerId: comment.partner_id,
      workspaceId: comment.workspace_id,
      accountId: comment.account_id,
      network,
      kind: 'dm',
      threadKey: contactId,
      contact: {
        id: contactId,
        name: comment.sender?.name ?? null,
        handle: comment.sender?.handle ?? null,
        avatar_url: null,
      },
      object: null,
      at: this.deps.now(),
    };
  }

  private replyMessage(
    comment: MessageRow,
    conversationId: string,
    req: PrivateReplyRequest,
    sent: SentReply,
  ): NewMessage {
    const now = this.deps.now();
    return {
      id: newId('message'),
      conversationId,
      partnerId: comment.partner_id,
      workspaceId: comment.workspace_id,
      accountId: comment.account_id,
      direction: 'outbound',
      kind: 'private_reply',
      platformMessageId: sent.message_id ?? null,
      sender: null,
      text: req.text,
      attachments: [],
      parentPlatformId: comment.platform_message_id,
      source: req.source,
      state: 'sent',
      idempotencyKey: req.idempotency?.key || null,
      requestHash: req.idempotency?.requestHash || null,
      createdAt: now,
      storedAt: now,
    };
  }
}
