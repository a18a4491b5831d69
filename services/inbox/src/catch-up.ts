import { type AccountsDirectory, accountGone, type KnownAccount } from '@svc/directory';
import { type Conversation, GraphApiError, type GraphClient } from '@svc/graph-client';
import { newId } from '@svc/ids';
import type { Logger } from '@svc/logging';
import type { AccountImports } from './account-imports.ts';
import { type Pacer, SweepStopped, UNPACED } from './call-pacer.ts';
import type { InboxEvents } from './inbox-events.ts';
import type { NewConversation } from './inbox-rows.ts';
import type { InboxStore } from './inbox-store.ts';
import { commentRow, dmRow, type HistoryRow, historyMessage, repliesOf } from './network-history.ts';
import type { SendRecords } from './send-records.ts';
import type { MessageRow } from './views.ts';

/** How much history an import reads: what the networks let us read (facts §4.2) and what an inbox shows. */
const DM_CONVERSATIONS = 50;
const OBJECTS = 25;
/** A reconciliation reads conversations a page at a time, latest activity first, at most this many. */
const SWEEP_PAGE = 25;
const SWEEP_CONVERSATIONS = 100;
/**
 * How long a message's webhook may still be on its way: a message this recent that came after
 * the account connected is announced by whoever stores it first, the import or its webhook.
 */
const LIVE_MARGIN_MS = 60_000;

export interface Imported {
  conversations: number;
  messages: number;
}

/** Where one import draws its lines, in milliseconds (see sideOf). */
interface Horizon {
  historyBefore: number;
  liveFrom: number;
  connectedAt: number;
}

type Side = 'history' | 'news';

/** How a run reads: at once (an import) or paced, back to a point in time (a reconciliation). */
interface Reading {
  pacer: Pacer;
  /** Conversations whose latest activity is older than this are not read again. */
  since: Date | null;
  /** Reconciliations go on with the comments when the DMs cannot be read (and the other way). */
  partial: boolean;
}

const IMPORT: Reading = { pacer: UNPACED, since: null, partial: false };

/**
 * Imports an account's recent history: its DM conversations (the 20 messages the network lets us
 * read of each) and the comments of its most recent objects. It closes the gaps webhooks leave:
 * before the account connected, while we were down, while the account was not active (its
 * webhooks are dropped then, see Intake), and whatever Meta never delivered (the reconciliation
 * runs it on every active account, see reconciliation.ts). Each message is stored once by its
 * network id, so running it twice, or beside the webhooks, adds nothing twice, and what is stored
 * by the import is announced by it (and not by a webhook that comes later), in the same
 * transaction. One of our sends still waiting for the network's answer that the network shows is
 * completed (`sent`, announced once), never recorded a second time.
 */
export class CatchUp {
  constructor(
    private readonly deps: {
      store: InboxStore;
      records: SendRecords;
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

  /** An import: everything the network lets us read; what it read settles the dropped webhooks. */
  async run(account: KnownAccount, token: string): Promise<Imported> {
    const startedAt = this.deps.now();
    const imported = await this.catchUp(account, token, IMPORT, startedAt);
    await this.deps.imports.settle(account.id, startedAt);
    this.deps.logger.info({ account: account.id, ...imported }, 'inbox history imported');
    return imported;
  }

  /**
   * A reconciliation: the conversations with activity since `since` and the comments of the
   * latest objects, read through `pacer`. A part the network refuses (a permission the account
   * lost, say) is logged and the other part still read; a refused token stops it.
   */
  async sweep(
    account: KnownAccount,
    token: string,
    reading: { pacer: Pacer; since: Date },
  ): Promise<Imported> {
    return this.catchUp(account, token, { ...reading, partial: true }, this.deps.now());
  }

  private async catchUp(
    account: KnownAccount,
    token: string,
    reading: Reading,
    startedAt: Date,
  ): Promise<Imported> {
    // The networks' history gives times in whole seconds: a message of the same second as the
    // line is on the news side of it.
    const historyBefore = (await this.deps.imports.begin(account, startedAt)).getTime();
    const horizon = {
      historyBefore: historyBefore - (historyBefore % 1000),
      liveFrom: startedAt.getTime() - LIVE_MARGIN_MS,
      connectedAt: account.connectedAt ? Date.parse(account.connectedAt) : 0,
    };
    const parts = [
      () => this.importConversations(account, token, horizon, reading),
      () => this.importComments(account, token, horizon, reading),
    ];
    const imported = { conversations: 0, messages: 0 };
    for (const part of parts) {
      try {
        const done = await part();
        imported.conversations += done.conversations;
        imported.messages += done.messages;
      } catch (error) {
        if (!reading.partial || !isPartRefusal(error)) throw error;
        this.deps.logger.warn(
          { account: account.id, reason: (error as Error).message },
          'reconciliation: part of the account could not be read',
        );
      }
    }
    return imported;
  }

  /** An account that is not active has nothing to import: it will when it is active again. */
  private async importIfActive(accountId: string): Promise<void> {
    const account = await this.deps.accounts.byId(accountId);
    if (account?.status !== 'active') return;
    await this.whileActive(accountId, (token) => this.run(account, token));
  }

  /**
   * Reads an account (an import or a reconciliation) with its token. An account that is gone, or
   * no longer active (its token is refused, and retrying would never help), stops the read, which
   * is logged; a token the network refuses meanwhile goes back to accounts, which changes the
   * account's status. Anything else goes on up.
   */
  async whileActive(accountId: string, read: (token: string) => Promise<unknown>): Promise<void> {
    let token: string | undefined;
    try {
      ({ token } = await this.deps.accounts.token(accountId));
      await read(token);
    } catch (error) {
      await this.leftActive(accountId, error, token);
    }
  }

  private async leftActive(accountId: string, error: unknown, usedToken: string | undefined): Promise<void> {
    const refused = error instanceof GraphApiError && error.tokenProblem !== null;
    if (!(refused || accountGone(error))) throw error;
    if (refused && usedToken !== undefined)
      await this.deps.accounts.reportTokenProblem(accountId, usedToken, error);
    this.deps.logger.info(
      { account: accountId, reason: error.message },
      'inbox not read: the account left active',
    );
  }

  private async importConversations(
    account: KnownAccount,
    token: string,
    horizon: Horizon,
    reading: Reading,
  ) {
    const listed = await this.listConversations(account, token, reading);
    let messages = 0;
    for (const conversation of listed)
      messages += await this.importConversation(account, conversation, horizon);
    return { conversations: listed.length, messages };
  }

  /**
   * An import reads the 50 latest conversations in one call; a reconciliation pages through
   * them, latest activity first, until one is older than its look-back (or 100 are read).
   */
  private async listConversations(account: KnownAccount, token: string, reading: Reading) {
    const platform = account.network === 'photo_network' ? 'instagram' : 'messenger';
    const read = (limit: number, after?: string) =>
      reading.pacer.call(() =>
        this.deps.graph.inbox.conversations(token, account.pageId, {
          platform,
          limit,
          ...(after ? { after } : {}),
        }),
      );
    if (!reading.since) return (await read(DM_CONVERSATIONS)).data;
    const since = reading.since.getTime();
    const listed: Conversation[] = [];
    let after: string | undefined;
    do {
      const page = await read(SWEEP_PAGE, after);
      const recent = page.data.filter((c) => !c.updated_time || new Date(c.updated_time).getTime() >= since);
      listed.push(...recent);
      if (recent.length < page.data.length || !page.paging?.next) break;
      after = page.paging.cursors?.after;
    } while (after && listed.length < SWEEP_CONVERSATIONS);
    return listed.slice(0, SWEEP_CONVERSATIONS);
  }

  private async importConversation(account: KnownAccount, conversation: Conversation, horizon: Horizon) {
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

  private async importComments(
    account: KnownAccount,
    token: string,
    horizon: Horizon,
    reading: Reading,
  ): Promise<Imported> {
    const { graph } = this.deps;
    const { pacer } = reading;
    const instagram = account.network === 'photo_network';
    const objects = instagram
      ? (await pacer.call(() => graph.instagram.recentMedia(token, account.platformId, OBJECTS))).map(
          (m) => ({
            id: m.id,
            permalink: m.permalink ?? null,
            caption: m.caption ?? null,
          }),
        )
      : (await pacer.call(() => graph.pages.recentPosts(token, account.pageId, OBJECTS))).map((p) => ({
          id: p.id,
          permalink: p.permalink_url ?? null,
          caption: p.message ?? null,
        }));
    let conversations = 0;
    let messages = 0;
    for (const object of objects) {
      const comments = instagram
        ? (await pacer.call(() => graph.inbox.instagramComments(token, object.id))).data.flatMap((c) => [
            c,
            ...repliesOf(c),
          ])
        : (await pacer.call(() => graph.inbox.pageComments(token, object.id))).data;
      if (comments.length === 0) continue;
      const rows = comments.map((c) => commentRow(account, object.id, c, this.deps.now()));
      conversations += 1;
      const thread = { kind: 'comments' as const, threadKey: object.id, contact: null, object };
      messages += await this.store(account, thread, rows, horizon);
    }
    return { conversations, messages };
  }

  /**
   * One conversation and the messages new to us in one transaction, news announced in it; one of
   * our sends waiting for the network's answer is completed instead of recorded twice. Answers
   * how many messages were new to us.
   */
  private async store(
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
    const sides = new Map(fresh.map((row) => [row.platformId, sideOf(row, horizon)]));
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
      const isNews = (m: MessageRow) => sides.get(m.platform_message_id ?? '') === 'news';
      // History is read already: it counts in the conversation but never as unread. News is
      // unread, as its webhook would have made it; our own sends are never unread.
      const counts = [
        ...stored.map((m) => ({
          conversationId,
          at: m.created_at,
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

/**
 * History is what is older than the account's first import: it was there before the account
 * connected, and is stored without events. News is newer than the first import: it arrived while
 * the account was not active, while we were down, or its webhook never came, and the import
 * announces it, as its webhook would have. A message a little older than the first import (within
 * the live margin) that came after the account connected is news too: its webhook may still be on
 * its way, and whichever of the two stores it first announces it, once.
 */
function sideOf(row: HistoryRow, horizon: Horizon): Side {
  const at = row.at.getTime();
  if (at >= horizon.historyBefore) return 'news';
  return at >= horizon.liveFrom && at >= horizon.connectedAt ? 'news' : 'history';
}

/** A part of the account the network refused (a permission, a rate limit), not the whole account. */
function isPartRefusal(error: unknown): boolean {
  if (error instanceof SweepStopped) return false;
  return error instanceof GraphApiError && error.tokenProblem === null;
}
