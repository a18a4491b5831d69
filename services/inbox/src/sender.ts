import type { IdempotencyClaim, PublishingService, ServiceClient } from '@svc/contracts';
import type { MessageView, RequestOrigin } from '@svc/contracts/public';
import type { Caller } from '@svc/db';
import { isUniqueViolation } from '@svc/db';
import type { KnownAccount } from '@svc/directory';
import { errors, ServiceError } from '@svc/errors';
import { GraphApiError } from '@svc/graph-client';
import { newId } from '@svc/ids';
import type { Logger } from '@svc/logging';
import { replayedSend, type SendingParts } from './idempotent-sends.ts';
import type { ConversationRow, MessageRow, NewMessage } from './inbox-rows.ts';
import { attachmentsOf } from './network-history.ts';
import { sendingAccount } from './sending-account.ts';
import { checkText } from './text-limits.ts';
import { messageView, SEVEN_DAYS_MS, STANDARD_WINDOW_MS } from './views.ts';

export interface SendRequest {
  conversationId: string;
  text: string;
  mediaIds: string[];
  replyTo: string;
  tag: string;
  source: RequestOrigin;
  idempotency?: IdempotencyClaim | undefined;
}

/** What the network says of a send that went out: its id, and its time and files when known. */
export interface NetworkSend {
  platformId: string;
  at?: Date;
  /** The network's own copy of the files (our media URL expires within the hour). */
  attachments?: MessageRow['attachments'] | undefined;
}

/** What one send does at the network: the call, and what the message records. */
interface Delivery {
  kind: MessageRow['kind'];
  parentPlatformId: string | null;
  attachments: MessageRow['attachments'];
  call: (token: string) => Promise<string>;
}

/**
 * Sends: a DM through the Send API (inside its window, or with human_agent), a public reply to a
 * comment, a new comment on an object. The message is stored as `sending` before the network is
 * called (that claims the idempotency key), then marked sent with the network's id and announced
 * in one transaction; a refusal removes it (502 with the network's error). A send whose outcome
 * is unknown (timeout, crash) stays `sending`: its echo or a reconciliation that sees it at the
 * network completes it, and the settlement asks the network after a bounded time (see
 * send-settlement.ts), so its Idempotency-Key then answers the outcome. A file sent is stored
 * with the network's URL of it, read back after the send: ours expires within the hour.
 */
export class Sender {
  constructor(
    private readonly deps: SendingParts & {
      publishing: ServiceClient<typeof PublishingService>;
      logger: Logger;
    },
  ) {}

  async send(caller: Caller, req: SendRequest): Promise<{ message: MessageView; replayed: boolean }> {
    const { store, now } = this.deps;
    const replay = await replayedSend(store, caller.partnerId, req.idempotency, now());
    if (replay) return replay;
    const conversation = await store.conversation(caller, req.conversationId);
    const account = await sendingAccount(this.deps.accounts, conversation.accountId);
    const delivery =
      conversation.kind === 'dm'
        ? await this.directMessage(caller, conversation, account, req)
        : await this.comment(caller, conversation, req);
    const pending = await this.claim({
      id: newId('message'),
      conversationId: conversation.id,
      partnerId: conversation.partnerId,
      workspaceId: conversation.workspaceId,
      accountId: conversation.accountId,
      direction: 'outbound',
      kind: delivery.kind,
      platformMessageId: null,
      sender: { id: account.platformId, name: null, handle: null },
      text: req.text || null,
      attachments: delivery.attachments,
      parentPlatformId: delivery.parentPlatformId,
      source: req.source,
      state: 'sending',
      idempotencyKey: req.idempotency?.key || null,
      requestHash: req.idempotency?.requestHash || null,
      createdAt: now(),
      storedAt: now(),
    });
    const platformId = await this.call(account, pending.id, delivery.call);
    const attachments =
      delivery.attachments.length > 0 ? await this.networkAttachments(account, platformId) : undefined;
    return { message: await this.complete(pending.id, { platformId, attachments }), replayed: false };
  }

  /**
   * The files of a message we sent, as the network hosts them (`GET /{message-id}`). When the
   * network cannot tell now, the message keeps what it has (the echo's copy when its echo came
   * first, else our URL, which expires), and this is logged.
   */
  async networkAttachments(account: KnownAccount, platformId: string) {
    try {
      const { token } = await this.deps.accounts.token(account.id);
      const attachments = attachmentsOf(await this.deps.graph.inbox.message(token, platformId));
      return attachments.length > 0 ? attachments : undefined;
    } catch (err) {
      this.deps.logger.warn(
        { err, account: account.id },
        "could not read a sent message's files back: it keeps our media URL",
      );
      return undefined;
    }
  }

  /** Stores the message being sent; the unique key per partner makes a concurrent retry a 409. */
  private async claim(message: NewMessage): Promise<NewMessage> {
    try {
      await this.deps.store.insertMessage(this.deps.store.pool, message);
      return message;
    } catch (error) {
      if (!isUniqueViolation(error)) throw error;
      throw errors.conflict('a request with this Idempotency-Key is still being sent; retry shortly');
    }
  }

  /** Calls the network; a refusal drops the pending message, an unknown outcome keeps it. */
  private async call(account: KnownAccount, pendingId: string, call: (token: string) => Promise<string>) {
    const { accounts, store } = this.deps;
    const { token } = await accounts.token(account.id);
    try {
      return await call(token);
    } catch (error) {
      if (!(error instanceof GraphApiError) || !error.outcomeUnknown) await store.dropSending(pendingId);
      if (error instanceof GraphApiError) {
        await accounts.reportTokenProblem(account.id, token, error);
        if (error.outcomeUnknown)
          throw new ServiceError(
            'network_error',
            `the network did not answer in time; the message may still arrive (it then appears in the conversation, and a retry with the same Idempotency-Key answers it once the network was asked): ${error.message}`,
            { details: error.details },
          );
      }
      throw error;
    }
  }

  /**
   * Marks the send sent and announces it, unless its echo (or a reconciliation) did so first;
   * answers it as stored. When the network's message was recorded on its own, that record
   * becomes the send (its Idempotency-Key answers it) and the `sending` one goes.
   */
  async complete(pendingId: string, sent: NetworkSend): Promise<MessageView> {
    const { store, records, events, now } = this.deps;
    const id = await store.write(async (tx) => {
      const pending = await store.messageById(tx, pendingId);
      const at = sent.at ?? now();
      // The conversation first, then the message: the order the intake locks them in.
      await store.countMessage(tx, pending.conversationId, { at, inbound: false, unread: false }, now());
      const recorded = await store.messageByPlatformId(tx, pending.accountId, sent.platformId);
      if (recorded && recorded.id !== pendingId) {
        if (pending.state === 'sending') await records.takeOver(tx, recorded.id, pending, sent.attachments);
        return { result: recorded.id, events: [] };
      }
      const mine = await records.placeSent(tx, pendingId, { ...sent, at });
      if (!mine && sent.attachments) await records.setAttachments(tx, pendingId, sent.attachments);
      return { result: pendingId, events: mine ? await events.announce(tx, [pendingId]) : [] };
    });
    return messageView(await store.messageById(store.pool, id), now());
  }

  private async directMessage(
    caller: Caller,
    conversation: ConversationRow,
    account: KnownAccount,
    req: SendRequest,
  ): Promise<Delivery> {
    if (req.replyTo)
      throw errors.validation('reply_to', 'reply_to answers a comment; this is a direct-message thread');
    if (req.text && req.mediaIds.length > 0)
      throw errors.validation(
        'media',
        'a direct message carries text or one image; send them as two messages',
      );
    if (req.mediaIds.length > 1) throw errors.validation('media', 'a direct message carries one image');
    if (!req.text && req.mediaIds.length === 0) throw errors.validation('text', 'text or media is required');
    if (req.text) checkText(req.text, conversation.network, 'dm');
    const humanAgent = this.checkWindow(conversation, req.tag);
    const image = req.mediaIds[0]
      ? await this.mediaUrl(caller, req.mediaIds[0], conversation.network)
      : undefined;
    const input = {
      recipientId: conversation.threadKey,
      messagingType: humanAgent ? ('MESSAGE_TAG' as const) : ('RESPONSE' as const),
      ...(humanAgent ? { tag: 'HUMAN_AGENT' as const } : {}),
      ...(image ? { imageUrl: image.url } : { text: req.text }),
    };
    return {
      kind: 'message',
      parentPlatformId: null,
      attachments: image ? [{ type: 'image', url: image.url, mime: image.mime }] : [],
      call: async (token) => {
        const sent = await this.deps.graph.inbox.send(token, account.pageId, input);
        if (!sent.message_id) throw errors.conflict('the network accepted the message without an id');
        return sent.message_id;
      },
    };
  }

  /** Whether the send needs the human_agent tag; 409 when our record says no send can go now. */
  private checkWindow(conversation: ConversationRow, tag: string): boolean {
    const last = conversation.lastInboundAt;
    const now = this.deps.now().getTime();
    const closesAt = last ? new Date(last.getTime() + STANDARD_WINDOW_MS) : null;
    if (closesAt && now < closesAt.getTime()) return tag === 'human_agent';
    const agentUntil = last ? new Date(last.getTime() + SEVEN_DAYS_MS) : null;
    if (tag === 'human_agent' && agentUntil && now < agentUntil.getTime()) return true;
    if (!closesAt)
      throw errors.conflict('the person has not written yet: a message can be sent only after theirs');
    throw errors.conflict(
      tag === 'human_agent'
        ? `the messaging window closed at ${closesAt.toISOString()} and the human_agent window at ${agentUntil?.toISOString()}`
        : `the 24-hour messaging window closed at ${closesAt.toISOString()}; a human agent may still answer with tag human_agent until ${agentUntil?.toISOString()}`,
    );
  }

  private async mediaUrl(caller: Caller, mediaId: string, network: string) {
    try {
      return await this.deps.publishing.getMediaUrl({ caller, mediaId, network });
    } catch (error) {
      if (error instanceof ServiceError && error.code === 'not_found')
        throw errors.validation('media', `media ${mediaId} was not found in this workspace`);
      throw error;
    }
  }

  private async comment(caller: Caller, conversation: ConversationRow, req: SendRequest): Promise<Delivery> {
    if (req.mediaIds.length > 0) throw errors.validation('media', 'comments and replies carry text only');
    if (req.tag) throw errors.validation('tag', 'tag applies to direct messages only');
    checkText(req.text, conversation.network, 'comment');
    const parent = req.replyTo ? await this.topLevelComment(caller, conversation, req.replyTo) : null;
    const { graph } = this.deps;
    const instagram = conversation.network === 'photo_network';
    const text = req.text;
    return {
      kind: parent ? 'reply' : 'comment',
      parentPlatformId: parent,
      attachments: [],
      call: async (token) => {
        if (!instagram)
          return (await graph.inbox.commentOnPageObject(token, parent ?? conversation.threadKey, text)).id;
        return parent
          ? (await graph.inbox.replyToInstagramComment(token, parent, text)).id
          : (await graph.inbox.commentOnInstagramMedia(token, conversation.threadKey, text)).id;
      },
    };
  }

  /**
   * The network id of the comment a reply answers: `reply_to`'s, or its thread's when it is a reply
   * itself (the network takes replies to top-level comments only).
   */
  private async topLevelComment(
    caller: Caller,
    conversation: ConversationRow,
    replyTo: string,
  ): Promise<string> {
    const answered = await this.deps.store.message(caller, replyTo).catch(() => undefined);
    if (
      !answered ||
      answered.conversationId !== conversation.id ||
      answered.kind === 'message' ||
      !answered.platformMessageId
    )
      throw errors.validation('reply_to', 'reply_to must name a comment of this conversation');
    return answered.parentPlatformId ?? answered.platformMessageId;
  }
}
