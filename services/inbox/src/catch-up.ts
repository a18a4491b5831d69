import { type AccountsDirectory, accountGone, type KnownAccount } from '@svc/directory';
import { type Conversation, GraphApiError, type GraphClient } from '@svc/graph-client';
import type { Logger } from '@svc/logging';
import type { AccountImports } from './account-imports.ts';
import { type Pacer, SweepStopped, UNPACED } from './call-pacer.ts';
import { type Horizon, horizonOf } from './history-horizon.ts';
import { HistoryRecorder } from './history-recorder.ts';
import type { InboxEvents } from './inbox-events.ts';
import type { InboxStore } from './inbox-store.ts';
import { commentRow, dmRow, repliesOf } from './network-history.ts';
import type { SendRecords } from './send-records.ts';

/** How much history an import reads: what the networks let us read (facts §4.2) and what an inbox shows. */
const DM_CONVERSATIONS = 50;
const OBJECTS = 25;
/** A reconciliation reads conversations a page at a time, latest activity first, at most this many. */
const SWEEP_PAGE = 25;
const SWEEP_CONVERSATIONS = 100;

export interface Imported {
  conversations: number;
  messages: number;
}

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
  private readonly history: HistoryRecorder;

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
  ) {
    this.history = new HistoryRecorder(deps);
  }

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
    const historyBefore = await this.deps.imports.begin(account, startedAt);
    const connectedAt = account.connectedAt ? new Date(account.connectedAt) : null;
    const horizon = horizonOf(historyBefore, startedAt, connectedAt);
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
    return this.history.record(account, thread, rows, horizon);
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
      messages += await this.history.record(account, thread, rows, horizon);
    }
    return { conversations, messages };
  }
}

/** A part of the account the network refused (a permission, a rate limit), not the whole account. */
function isPartRefusal(error: unknown): boolean {
  if (error instanceof SweepStopped) return false;
  return error instanceof GraphApiError && error.tokenProblem === null;
}
