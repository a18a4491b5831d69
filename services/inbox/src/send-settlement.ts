import type { KnownAccount } from '@svc/directory';
import type { GraphClient } from '@svc/graph-client';
import type { Logger } from '@svc/logging';
import { type Pacer, SweepStopped } from './call-pacer.ts';
import type { MessageRow } from './inbox-rows.ts';
import type { InboxStore } from './inbox-store.ts';
import { commentRow, dmRow, type HistoryRow, repliesOf } from './network-history.ts';
import type { PrivateReplies } from './private-replies.ts';
import type { SendRecords } from './send-records.ts';
import type { Sender } from './sender.ts';

/** A send whose account cannot be asked (not active) is kept this long, then given up. */
const GIVE_UP_MS = 24 * 3_600_000;
/**
 * The network's times are whole seconds from its own clock: a message up to this much older than
 * our record of the send may still be it.
 */
const CLOCK_SLACK_MS = 5_000;
/** Sends settled per account and reconciliation (the rest wait for the next one). */
const BATCH = 20;

/** The network's message that is the send. */
interface Found {
  messageId: string;
  at: Date;
  attachments: HistoryRow['attachments'];
  /** DMs: the person of the conversation it is in. */
  recipientId?: string;
}

/**
 * Settles sends whose outcome nobody learned: the network's answer timed out, or the service
 * died between storing the send (`sending`, holding its Idempotency-Key, and for a private reply
 * its comment) and recording the answer, and no echo or reconciliation completed it since. After
 * INBOX_SEND_SETTLE_AFTER_MS (longer than any Graph call may take), the account's reconciliation
 * asks the network: the DM thread of the person (or the comments of the object) shows the message
 * from the account, with the same text, from the time of the send, or it does not. Shown: the send
 * is completed as if the network had answered (sent, announced once; a private reply answers its
 * comment). Not shown: it did not go out, and it is removed, so its key is free and its comment
 * available again. A send whose account cannot be asked (deleted, or not active for a day) is
 * given up the same way.
 */
export class SendSettlement {
  constructor(
    private readonly deps: {
      store: InboxStore;
      records: SendRecords;
      graph: GraphClient;
      sender: Sender;
      privateReplies: PrivateReplies;
      logger: Logger;
      now: () => Date;
      settleAfterMs: number;
    },
  ) {}

  /** Answers how many sends of this active account were settled. */
  async settle(account: KnownAccount, token: string, pacer: Pacer): Promise<number> {
    const { records, now, settleAfterMs, logger } = this.deps;
    const pending = await records.pending(account.id, new Date(now().getTime() - settleAfterMs), BATCH);
    let settled = 0;
    for (const send of pending) {
      try {
        await this.settleOne(account, token, pacer, send);
        settled += 1;
      } catch (err) {
        if (err instanceof SweepStopped) throw err;
        logger.warn(
          { err, account: account.id, message: send.id },
          'send not settled yet: the network could not tell',
        );
      }
    }
    return settled;
  }

  /** An account that cannot be asked: all its sends when it is gone, else those older than a day. */
  async giveUp(accountId: string, gone: boolean): Promise<void> {
    const { records, now, logger } = this.deps;
    const before = gone ? now() : new Date(now().getTime() - GIVE_UP_MS);
    for (;;) {
      const pending = await records.pending(accountId, before, BATCH);
      for (const send of pending) {
        await records.drop(records.pool, send.id);
        logger.warn(
          { account: accountId, message: send.id },
          'send given up: its account cannot be asked whether it went out',
        );
      }
      if (pending.length < BATCH) return;
    }
  }

  private async settleOne(
    account: KnownAccount,
    token: string,
    pacer: Pacer,
    send: MessageRow,
  ): Promise<void> {
    const { sender, privateReplies, records, logger } = this.deps;
    const found = await this.find(account, token, pacer, send);
    if (!found) {
      await records.drop(records.pool, send.id);
      logger.info({ account: account.id, message: send.id }, 'send settled: the network does not have it');
      return;
    }
    if (send.kind === 'private_reply') await privateReplies.complete(account, send.id, found);
    else
      await sender.complete(send.id, {
        platformId: found.messageId,
        at: found.at,
        attachments: found.attachments,
      });
    logger.info({ account: account.id, message: send.id }, 'send settled: the network has it');
  }

  /** The network's message that is this send, if the network shows one. */
  private async find(
    account: KnownAccount,
    token: string,
    pacer: Pacer,
    send: MessageRow,
  ): Promise<Found | undefined> {
    const candidates =
      send.kind === 'comment' || send.kind === 'reply'
        ? await this.accountComments(account, token, pacer, send)
        : await this.accountMessages(account, token, pacer, send);
    const from = send.storedAt.getTime() - CLOCK_SLACK_MS;
    const matching = candidates
      .filter(
        (c) => c.row.outbound && (c.row.text || null) === (send.text || null) && c.row.at.getTime() >= from,
      )
      .sort((a, b) => +a.row.at - +b.row.at);
    const taken = await this.takenByOthers(
      account,
      matching.map((c) => c.row.platformId),
    );
    const match = matching.find((c) => !taken.has(c.row.platformId));
    if (!match) return undefined;
    return {
      messageId: match.row.platformId,
      at: match.row.at,
      attachments: match.row.attachments,
      ...(match.recipientId ? { recipientId: match.recipientId } : {}),
    };
  }

  /** The account's messages in the DM thread of the send's person (a private reply's: the commenter). */
  private async accountMessages(account: KnownAccount, token: string, pacer: Pacer, send: MessageRow) {
    const { store, graph, now } = this.deps;
    const person =
      send.kind === 'private_reply'
        ? (await store.messageByPlatformId(store.pool, account.id, send.parentPlatformId ?? ''))?.sender?.id
        : (await store.conversationById(store.pool, send.conversationId)).threadKey;
    if (!person) return [];
    const platform = account.network === 'photo_network' ? 'instagram' : 'messenger';
    const page = await pacer.call(() =>
      graph.inbox.conversations(token, account.pageId, { platform, userId: person, limit: 1 }),
    );
    return page.data.flatMap((conversation) => {
      const recipientId =
        conversation.participants?.data.find((p) => p.id !== account.platformId)?.id ?? person;
      return (conversation.messages?.data ?? []).map((m) => ({ row: dmRow(account, m, now()), recipientId }));
    });
  }

  /** The comments of the send's object (its conversation's thread key). */
  private async accountComments(account: KnownAccount, token: string, pacer: Pacer, send: MessageRow) {
    const { store, graph, now } = this.deps;
    const objectId = (await store.conversationById(store.pool, send.conversationId)).threadKey;
    const comments =
      account.network === 'photo_network'
        ? (await pacer.call(() => graph.inbox.instagramComments(token, objectId))).data.flatMap((c) => [
            c,
            ...repliesOf(c),
          ])
        : (await pacer.call(() => graph.inbox.pageComments(token, objectId))).data;
    return comments.map((c) => ({ row: commentRow(account, objectId, c, now()), recipientId: undefined }));
  }

  /**
   * Network ids already stored as another send (they hold their own key): those are not this
   * one. A message recorded from the network on its own (source `network`, no key) may be.
   */
  private async takenByOthers(account: KnownAccount, platformIds: string[]): Promise<Set<string>> {
    const { store, records } = this.deps;
    const stored = await records.stored(store.pool, account.id, platformIds);
    const taken = new Set<string>();
    for (const id of stored) {
      const row = await store.messageByPlatformId(store.pool, account.id, id);
      if (row && (row.source !== 'network' || row.requestHash !== null)) taken.add(id);
    }
    return taken;
  }
}
