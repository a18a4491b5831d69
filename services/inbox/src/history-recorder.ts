import type { KnownAccount } from '@svc/directory';
import { newId } from '@svc/ids';
import { type Horizon, sideOf } from './history-horizon.ts';
import type { InboxEvents } from './inbox-events.ts';
import type { MessageRow, NewConversation } from './inbox-rows.ts';
import type { InboxStore } from './inbox-store.ts';
import { type HistoryRow, historyMessage } from './network-history.ts';
import type { SendRecords } from './send-records.ts';

/**
 * Stores what an import or a reconciliation (CatchUp) read of one conversation: each message
 * once by its network id, history without events and news announced in the same transaction
 * (see sideOf), and one of our sends the network shows completed rather than recorded twice.
 */
export class HistoryRecorder {
  constructor(
    private readonly deps: { store: InboxStore; records: SendRecords; events: InboxEvents; now: () => Date },
  ) {}

  /**
   * One conversation and the messages new to us in one transaction, news announced in it; one of
   * our sends waiting for the network's answer is completed instead of recorded twice. Answers
   * how many messages were new to us.
   */
  async record(
    account: KnownAccount,
    thread: Pick<NewConversation, 'kind' | 'threadKey' | 'contact' | 'object'>,
    rows: HistoryRow[],
    horizon: Horizon,
  ): Promise<number> {
    const { store, records, events, now } = this.deps;
    const known = await records.stored(
      store.pool,
      account.id,
      rows.map((r) => r.platformId),
    );
    // Oldest first, so that two sends of the same text complete in the order they went out.
    const fresh = rows.filter((row) => !known.has(row.platformId)).sort((a, b) => +a.at - +b.at);
    if (fresh.length === 0) return 0;
    const sides = new Map(fresh.map((row) => [row.platformId, sideOf(row.at, horizon)]));
    return store.write(async (tx) => {
      const at = now();
      const base = { partnerId: account.partnerId, workspaceId: account.workspaceId, accountId: account.id };
      const conversationId = await store.ensureConversation(tx, {
        id: newId('conversation'),
        ...base,
        network: account.network,
        ...thread,
        at,
      });
      const adopted: { id: string; at: Date }[] = [];
      const recorded: HistoryRow[] = [];
      for (const row of fresh) {
        const id = row.outbound ? await records.adopt(tx, { conversationId, ...row }) : undefined;
        if (id) adopted.push({ id, at: row.at });
        else recorded.push(row);
      }
      const stored = await store.insertMessages(
        tx,
        recorded.map((row) => historyMessage(row, { ...base, conversationId }, at)),
      );
      const isNews = (m: MessageRow) => sides.get(m.platformMessageId ?? '') === 'news';
      // History is read already: it counts in the conversation but never as unread. News is
      // unread, as its webhook would have made it; our own sends are never unread.
      const counts = [
        ...stored.map((m) => ({
          conversationId,
          at: m.createdAt,
          inbound: m.direction === 'inbound',
          unread: m.direction === 'inbound' && isNews(m),
        })),
        ...adopted.map((a) => ({ conversationId, at: a.at, inbound: false, unread: false })),
      ];
      const conversations = counts.length > 0 ? await store.countMessages(tx, counts, at) : [];
      const announced = [
        ...(await events.announceRecorded({ messages: stored.filter(isNews), conversations })),
        ...(await events.announce(
          tx,
          adopted.map((a) => a.id),
        )),
      ];
      return { result: stored.length + adopted.length, events: announced };
    });
  }
}
