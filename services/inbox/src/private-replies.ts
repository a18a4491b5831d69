import type { IdempotencyClaim } from '@svc/contracts';
import type { MessageView, RequestOrigin } from '@svc/contracts/public';
import { type Caller, isUniqueViolation } from '@svc/db';
import type { KnownAccount } from '@svc/directory';
import { errors, ServiceError } from '@svc/errors';
import { GraphApiError } from '@svc/graph-client';
import { newId } from '@svc/ids';
import { replayedSend, type SendingParts } from './idempotent-sends.ts';
import type { MessageRow, NewConversation, NewMessage } from './inbox-rows.ts';
import { sendingAccount } from './sending-account.ts';
import { checkText } from './text-limits.ts';
import { messageView, privateReply } from './views.ts';

/** What the network says of a private reply that went out. */
export interface SentReply {
  /** The commenter's id in DMs (PSID/IGSID), whose conversation holds the reply. */
  recipientId?: string | undefined;
  messageId?: string | undefined;
  at?: Date;
}

/** The network's refusal of a comment that cannot take a private reply (facts §4.4). */
const NOT_VALID_FOR_PRIVATE_REPLY = 2534025;

export interface PrivateReplyRequest {
  messageId: string;
  text: string;
  source: RequestOrigin;
  idempotency?: IdempotencyClaim | undefined;
}

/**
 * The one private reply (a DM through `recipient.comment_id`) the network allows to an inbound
 * comment within 7 days. The comment is claimed together with the reply's message, stored
 * `sending` in the comment's thread (hidden, holding the Idempotency-Key), in one transaction: two
 * requests cannot both send, and a crash or a timeout leaves a record the settlement finds
 * (send-settlement.ts). Once the network has it, the reply moves to the commenter's DM
 * conversation (created if new), `sent`, and the comment is marked answered; a refusal removes it
 * and frees the comment (or marks it not allowed).
 */
export class PrivateReplies {
  constructor(private readonly deps: SendingParts) {}

  async send(caller: Caller, req: PrivateReplyRequest): Promise<{ message: MessageView; replayed: boolean }> {
    const { store, now } = this.deps;
    const replay = await replayedSend(store, caller.partnerId, req.idempotency, now());
    if (replay) return replay;
    const comment = await store.message(caller, req.messageId);
    this.checkAllowed(comment);
    const account = await sendingAccount(this.deps.accounts, comment.accountId);
    checkText(req.text, account.network, 'dm');
    const pending = this.replyMessage(comment, account, req);
    await this.claim(comment, pending);
    const sent = await this.call(account, comment, pending);
    const id = await this.complete(account, pending.id, sent);
    return { message: messageView(await store.messageById(store.pool, id), now()), replayed: false };
  }

  /**
   * Records that the reply went out: in the commenter's DM conversation, `sent`, the comment
   * answered, message.sent. When the network's message was recorded on its own first (its echo,
   * a reconciliation), that record becomes the reply. Answers the reply's id.
   */
  async complete(account: KnownAccount, pendingId: string, sent: SentReply): Promise<string> {
    const { store, records, events, now } = this.deps;
    return store.write(async (tx) => {
      const pending = await store.messageById(tx, pendingId);
      const comment = await store.messageByPlatformId(tx, account.id, pending.parentPlatformId ?? '');
      if (!comment) throw errors.notFound('message');
      const at = sent.at ?? now();
      const conversationId = await store.ensureConversation(
        tx,
        this.commenterConversation(comment, account, sent.recipientId, at),
      );
      await store.countMessage(tx, conversationId, { at, inbound: false, unread: false }, now());
      const platformId = sent.messageId ?? null;
      const recorded = platformId ? await store.messageByPlatformId(tx, account.id, platformId) : undefined;
      if (recorded && recorded.id !== pendingId) {
        if (pending.state === 'sending') await records.takeOver(tx, recorded.id, pending);
        await store.settlePrivateReply(tx, comment.id, 'sent', recorded.id);
        return { result: recorded.id, events: [] };
      }
      const mine = await records.placeSent(tx, pendingId, { platformId, at, conversationId });
      if (!mine) return { result: pendingId, events: [] };
      await store.settlePrivateReply(tx, comment.id, 'sent', pendingId);
      return { result: pendingId, events: await events.announce(tx, [pendingId]) };
    });
  }

  /** Claims the comment's one private reply with its message; 409 when it is taken. */
  private async claim(comment: MessageRow, pending: NewMessage): Promise<void> {
    const { store, records } = this.deps;
    try {
      await store.write(async (tx) => {
        await store.insertMessage(tx, pending);
        if (!(await records.claimPrivateReply(tx, comment.id, pending.id)))
          throw errors.conflict('this comment already has its private reply (sent or being sent)');
        return { result: undefined, events: [] };
      });
    } catch (error) {
      if (!isUniqueViolation(error)) throw error;
      throw errors.conflict('a request with this Idempotency-Key is still being sent; retry shortly');
    }
  }

  /**
   * Sends the reply. A refusal removes it (the comment is free again, or not allowed when the
   * network says it cannot take one); an unknown outcome (timeout) keeps it for the settlement.
   */
  private async call(account: KnownAccount, comment: MessageRow, pending: NewMessage): Promise<SentReply> {
    const { accounts, graph, records, store } = this.deps;
    let token: string | undefined;
    try {
      ({ token } = await accounts.token(account.id));
      const commentId = comment.platformMessageId ?? '';
      const sent = await graph.inbox.privateReply(token, account.pageId, {
        commentId,
        text: pending.text ?? '',
      });
      return { recipientId: sent.recipient_id, messageId: sent.message_id };
    } catch (error) {
      if (error instanceof GraphApiError && token !== undefined)
        await accounts.reportTokenProblem(account.id, token, error);
      if (error instanceof GraphApiError && error.outcomeUnknown)
        throw new ServiceError(
          'network_error',
          `the network did not answer in time; the private reply may still arrive (a retry with the same Idempotency-Key answers it once the network was asked): ${error.message}`,
          { details: error.details },
        );
      const refused = error instanceof GraphApiError && error.graph.subcode === NOT_VALID_FOR_PRIVATE_REPLY;
      await records.drop(store.pool, pending.id, refused ? 'not_allowed' : null);
      throw error;
    }
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

  /** The commenter's DM conversation, where the network puts a private reply. */
  private commenterConversation(
    comment: MessageRow,
    account: KnownAccount,
    recipientId: string | undefined,
    at: Date,
  ): NewConversation {
    const contactId = recipientId ?? comment.sender?.id ?? '';
    return {
      id: newId('conversation'),
      partnerId: comment.partnerId,
      workspaceId: comment.workspaceId,
      accountId: comment.accountId,
      network: account.network,
      kind: 'dm',
      threadKey: contactId,
      contact: {
        id: contactId,
        name: comment.sender?.name ?? null,
        handle: comment.sender?.handle ?? null,
        avatar_url: null,
      },
      object: null,
      at,
    };
  }

  /** The reply as it waits for the network: in the comment's thread, hidden, sent by the account. */
  private replyMessage(comment: MessageRow, account: KnownAccount, req: PrivateReplyRequest): NewMessage {
    const now = this.deps.now();
    return {
      id: newId('message'),
      conversationId: comment.conversationId,
      partnerId: comment.partnerId,
      workspaceId: comment.workspaceId,
      accountId: comment.accountId,
      direction: 'outbound',
      kind: 'private_reply',
      platformMessageId: null,
      sender: { id: account.platformId, name: null, handle: null },
      text: req.text,
      attachments: [],
      parentPlatformId: comment.platformMessageId,
      source: req.source,
      state: 'sending',
      idempotencyKey: req.idempotency?.key || null,
      requestHash: req.idempotency?.requestHash || null,
      createdAt: now,
      storedAt: now,
    };
  }
}
