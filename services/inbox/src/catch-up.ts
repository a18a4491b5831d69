import { ServiceError } from '@svc/errors';
import { type Conversation, GraphApiError, type GraphClient } from '@svc/graph-client';
import { newId } from '@svc/ids';
import type { Logger } from '@svc/logging';
import type { AccountImports } from './account-imports.ts';
import type { AccountsDirectory, InboxAccount } from './accounts-directory.ts';
import type { InboxEvents } from './inbox-events.ts';
import type { NewConversation } from './inbox-rows.ts';
import type { InboxStore } from './inbox-store.ts';
import { commentRow, dmRow, type HistoryRow, historyMessage, repliesOf } from './network-history.ts';
import type { MessageRow } from './views.ts';

/** How much history an import reads: what the networks let us read (facts §4.2) and what an inbox shows. */
const DM_CONVERSATIONS = 50;
const OBJECTS = 25;
/**
 * What is newer than this when an import starts may still have its webhook on the way (or be our
 * own send in flight, which records its message itself): an import that took it as history would
 * swallow its event.
 */
const LIVE_MARGIN_MS = 60_000;

/** Refusals that say the account is no longer there to read from. */
const GONE = new Set(['account_disconnected', 'not_found']);

interface Imported {
  conversations: number;
  messages: number;
}

/** Where one import draws its lines, in milliseconds (see sideOf). */
interface Horizon {
  historyBefore: number;
  liveFrom: number;
}

type Side = 'history' | 'news';

/**
 * Imports an account's recent history: its DM conversations (the 20 messages the network lets us
 * read of each) and the comments of its most recent objects. It closes the gaps webhooks leave:
 * before the account connected, while we were down, and while the account was not active (its
 * webhooks are dropped then, see Intake). Each message is stored once by its network id, so running
 * it twice, or beside the webhooks, adds nothing twice, and what is stored by the import is
 * announced by it (and not by a webhook that comes later), in the same transaction.
 */
export class CatchUp {
  constructor(
    private readonly deps: {
      store: InboxStore;
      imports: AccountImports;
      accounts: AccountsDirectory;
      events: InboxEvents;
      graph: GraphClient;
      logger: Logger;
      now: () => Date;
    },
  ) {}

  /** `account.connected`: a new account's history, or what a reconnected one missed meanwhile. */
  async afterConnect(accountId: string): Promise<void> {
    await this.importIfActive(accountId);
  }

  /**
   * `accounts.changed`: an account back to active from error (a permission granted again, a
   * refresh) imports what it missed, if any of its webhooks was dropped meanwhile, or its history
   * if it connected in error and was never imported.
   */
  async afterChange(accountId: string): Promise<void> {
    if (await this.deps.imports.due(accountId)) await this.importIfActive(accountId);
  }

  async run(account: InboxAccount): Promise<Imported> {
    const { imports, now } = this.deps;
    const token = await this.deps.accounts.token(account.id);
    const startedAt = now();
    // The networks' history gives times in whole seconds: a message of the same second as the
    // line is on the news side of it.
    const historyBefore = (await imports.begin(account, startedAt)).getTime();
    const horizon = {
      historyBefore: historyBefore - (historyBefore % 1000),
      liveFrom: startedAt.getTime() - LIVE_MARGIN_MS,
    };
    const dms = await this.importConversations(account, token, horizon);
    const comments = await this.importComments(account, token, horizon);
    await imports.settle(account.id, startedAt);
    const imported = {
      conversations: dms.conversations + comments.conversations,
      messages: dms.messages + comments.messages,
    };
    this.deps.logger.info({ account: account.id, ...imported }, 'inbox history imported');
    return imported;
  }

  /**
   * An account that is gone, or not active (its token is refused, and retrying would never
   * help), has nothing to import: it will when it is active again. A token the network refuses
   * meanwhile goes back to accounts, which changes the account's status.
   */
  private async importIfActive(accountId: string): Promise<void> {
    const { accounts, logger } = this.deps;
    const account = await accounts.byId(accountId);
    if (account?.status !== 'active') return;
    await this.run(account).catch(async (error: unknown) => {
      const refused = error instanceof GraphApiError && error.tokenProblem !== null;
      if (!(refused || (error instanceof ServiceError && GONE.has(error.code)))) throw error;
      if (refused) await accounts.reportTokenProblem(accountId, error);
      logger.info(
        { account: accountId, reason: error.message },
        'history not imported: the account left active',
      );
    });
  }

  private async importConversations(account: InboxAccount, token: string, horizon: Horizon) {
    const platform = account.network === 'photo_network' ? 'instagram' : 'messenger';
    const page = await this.deps.graph.inbox.conversations(token, account.pageId, {
      platform,
      limit: DM_CONVERSATIONS,
    });
    let messages = 0;
    for (const conversation of page.data)
      messages += await this.importConversation(account, conversation, horizon);
    return { conversations: page.data.length, messages };
  }

  private async importConversation(account: InboxAccount, conversation: Conversation, horizon: Horizon) {
    const person = conversation.participants?.data.find((p) => p.id !== account.platformId);
    if (!person) return 0;
    const contact = {
      id: person.id,
      name: person.name ?? person.username ?? null,
      handle: person.username ?? null,
      avatar_url: null,
    };
    const rows = (conversation.messages?.data ?? []).map((m) => dmRow(account, m, this.deps.now()));
    const thread = { kind: 'dm' as const, threadKey: person.id, contact, object: null };
    return this.store(account, thread, rows, horizon);
  }

  private async importComments(account: InboxAccount, token: string, horizon: Horizon): Promise<Imported> {
    const { graph } = this.deps;
    const objects =
      account.network === 'photo_network'
        ? (await graph.instagram.recentMedia(token, account.platformId, OBJECTS)).map((m) => ({
            id: m.id,
            permalink: m.permalink ?? null,
            caption: m.caption ?? null,
          }))
        : (await graph.pages.recentPosts(token, account.pageId, OBJECTS)).map((p) => ({
            id: p.id,
            permalink: p.permalink_url ?? null,
            caption: p.message ?? null,
          }));
    let conversations = 0;
    let messages = 0;
    for (const object of objects) {
      const comments =
        account.network === 'photo_network'
          ? (await graph.inbox.instagramComments(token, object.id)).data.flatMap((c) => [c, ...repliesOf(c)])
          : (await graph.inbox.pageComments(token, object.id)).data;
      if (comments.length === 0) continue;
      const rows = comments.map((c) => commentRow(account, object.id, c, this.deps.now()));
      conversations += 1;
      const thread = { kind: 'comments' as const, threadKey: object.id, contact: null, object };
      messages += await this.store(account, thread, rows, horizon);
    }
    return { conversations, messages };
  }

  /**
   * One conversation and its messages in one transaction, news announced in it; answers how many
   * were new to us.
   */
  private async store(
    account: InboxAccount,
    thread: Pick<NewConversation, 'kind' | 'threadKey' | 'contact' | 'object'>,
    rows: HistoryRow[],
    horizon: Horizon,
  ): Promise<number> {
    const { store, events, now } = this.deps;
    const sides = new Map<string, Side>();
    for (const row of rows) {
      const side = sideOf(row, horizon);
      if (side) sides.set(row.platformId, side);
    }
    const kept = rows.filter((row) => sides.has(row.platformId));
    if (kept.length === 0) return 0;
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
      const stored = await store.insertMessages(
        tx,
        kept.map((row) => historyMessage(row, { ...base, conversationId }, at)),
      );
      const isNews = (m: MessageRow) => sides.get(m.platform_message_id ?? '') === 'news';
      // History is read already: it counts in the conversation but never as unread. News is
      // unread, as its webhook would have made it.
      const counts = stored.map((m) => ({
        conversationId,
        at: m.created_at,
        inbound: m.direction === 'inbound',
        unread: m.direction === 'inbound' && isNews(m),
      }));
      const conversations = counts.length > 0 ? await store.countMessages(tx, counts, at) : [];
      const announced = await events.announceRecorded({ messages: stored.filter(isNews), conversations });
      return { result: stored.length, events: announced };
    });
  }
}

/**
 * History is what is older than the account's first import (and than the live margin): it was
 * there before the account connected, and is stored without events. News is newer than the first
 * import: it arrived while the account was not active (or while we were down) and no webhook
 * announced it, so the import does, as its webhook would have. What is newer than the live
 * margin on a first import, and our own messages newer than it on any import, are left to their
 * webhooks (or to the send that records them): none of the two sides.
 */
function sideOf(row: HistoryRow, horizon: Horizon): Side | undefined {
  const at = row.at.getTime();
  if (at < Math.min(horizon.historyBefore, horizon.liveFrom)) return 'history';
  if (at >= horizon.historyBefore && !(row.outbound && at >= horizon.liveFrom)) return 'news';
  return undefined;
}
