import type { Bus, ConsumerObserver, JsMsg, MetaWebhook } from '@svc/bus';
import type { AccountsDirectory, KnownAccount } from '@svc/directory';
import { newId } from '@svc/ids';
import type { Logger } from '@svc/logging';
import type pg from 'pg';
import type { AccountImports } from './account-imports.ts';
import { InboxChanges } from './inbox-changes.ts';
import type { InboxEvents, Recorded } from './inbox-events.ts';
import { type NewConversation, type NewMessage, threadOf } from './inbox-rows.ts';
import type { InboxStore } from './inbox-store.ts';
import { IntakeBatches } from './intake-batches.ts';
import type { CommentItem, DmItem, InboundItem, Located } from './meta-items.ts';
import { readWebhook } from './meta-webhook.ts';
import type { NetworkLookups } from './network-lookups.ts';
import { adoptPendingSend } from './send-records.ts';
import { deadLetterAtOnce, UnreadableWebhook } from './unreadable-webhooks.ts';

/** One item (or change) and one account it is about. */
interface Target<T extends Located = InboundItem> {
  item: T;
  account: KnownAccount;
}

/** A target with its conversation as it would be created. */
interface Plan extends Target {
  conversation: NewConversation;
}

/**
 * Turns the provider webhooks on the PROVIDER stream into messages, exactly once: Meta delivers at
 * least once and out of order, JetStream redelivers after a crash, so a message is recorded only
 * if its network id is new for its account, and its event is written in the same transaction (the
 * messages of bodies handled at once share one, see IntakeBatches). The echo of a message we sent marks ours as seen instead of adding one; a message the business sent
 * from the network's own app is recorded as outbound with source `network`. Then what the body
 * says changed (edits, unsends, removed or hidden comments, reactions, read receipts) is applied
 * (InboxChanges). Only active accounts take webhooks: see activeTargets. A body, or a part of one,
 * that cannot be read becomes a dead letter at once (UnreadableWebhook), after what could be read
 * was recorded.
 */
export class Intake {
  private readonly changes: InboxChanges;
  private readonly batches = new IntakeBatches<Plan>((plans) => this.recordTheirs(plans));

  constructor(
    private readonly deps: {
      store: InboxStore;
      imports: AccountImports;
      accounts: AccountsDirectory;
      lookups: NetworkLookups;
      events: InboxEvents;
      bus: Bus;
      /** Counts the dead letters made here with the consumer's (the service's bus metrics). */
      observer?: ConsumerObserver;
      appId: string;
      logger: Logger;
      now: () => Date;
    },
  ) {
    this.changes = new InboxChanges(deps);
  }

  /**
   * One webhook body. Without the JetStream message (a direct call), an unreadable part is thrown
   * as UnreadableWebhook instead of dead-lettered.
   */
  async receive(webhook: MetaWebhook, message?: JsMsg): Promise<void> {
    const read = readWebhook(webhook.body);
    if (read.items.length > 0) await this.record(read.items);
    if (read.changes.length > 0) await this.changes.apply(await this.activeTargets(read.changes, false));
    if (read.unreadable.length === 0) return;
    const error = new UnreadableWebhook(read.unreadable);
    if (!message) throw error;
    await deadLetterAtOnce(this.deps, message, error);
  }

  /**
   * New messages and comments. Those of other people go with other bodies' in one transaction
   * (IntakeBatches); a body that may hold our own sends' echoes, which may complete a send in
   * flight, is recorded in a transaction of its own (rare).
   */
  private async record(items: InboundItem[]): Promise<void> {
    const targets = await this.activeTargets(items, true);
    const plans = await Promise.all(targets.map((target) => this.plan(target)));
    if (plans.length === 0) return;
    if (!plans.some((p) => isOutbound(p.item) && this.mayBeOurs(p.item))) return this.batches.record(plans);
    const ours = plans.filter((p) => isOutbound(p.item) && this.mayBeOurs(p.item));
    const theirs = plans.filter((p) => !ours.includes(p)).sort(byThread);
    const { store, events } = this.deps;
    const recorded = await store.write(async (tx) => {
      const { announced, completed } = await this.recordAll(tx, theirs);
      const adopted: string[] = [];
      for (const plan of ours.sort(byThread)) {
        const id = await this.recordOurs(tx, plan);
        if (id) adopted.push(id);
      }
      const rows = [
        ...(await events.announceRecorded(announced)),
        ...(await events.announce(tx, adopted)),
        ...(await events.announce(tx, completed, 'message.updated')),
      ];
      return { result: announced.messages.length + adopted.length, events: rows };
    });
    this.deps.logger.debug({ items: items.length, recorded }, 'provider webhook handled');
  }

  /** The messages of other people, of one or more bodies, in one transaction with their events. */
  private async recordTheirs(plans: Plan[]): Promise<void> {
    const { store, events } = this.deps;
    const recorded = await store.write(async (tx) => {
      const { announced, completed } = await this.recordAll(tx, [...plans].sort(byThread));
      const rows = [
        ...(await events.announceRecorded(announced)),
        ...(await events.announce(tx, completed, 'message.updated')),
      ];
      return { result: announced.messages.length, events: rows };
    });
    this.deps.logger.debug({ items: plans.length, recorded }, 'provider webhooks recorded');
  }

  /**
   * Records a batch: conversations, then the messages new to us, then what they change; then what
   * the webhook tells of messages stored before it (see completeMessages).
   */
  private async recordAll(tx: pg.PoolClient, plans: Plan[]) {
    const { store, now } = this.deps;
    if (plans.length === 0) return { announced: { messages: [], conversations: [] }, completed: [] };
    const threads = await store.ensureConversations(
      tx,
      plans.map((p) => p.conversation),
    );
    const messages = await store.insertMessages(
      tx,
      plans.map((plan) =>
        this.messageOf(plan, threads.get(threadOf(plan.conversation)) ?? plan.conversation.id),
      ),
    );
    const counts = messages.map((m) => ({
      conversationId: m.conversationId,
      at: m.createdAt,
      inbound: m.direction === 'inbound',
      unread: m.direction === 'inbound',
    }));
    const conversations = counts.length > 0 ? await store.countMessages(tx, counts, now()) : [];
    const announced: Recorded = { messages, conversations };
    return { announced, completed: await this.completeMessages(tx, plans, messages) };
  }

  /**
   * A DM stored before its webhook came (by a history import or a reconciliation, which read the
   * network's API) lacks what only webhooks tell: a shared link or post, a story, a reply's
   * parent, that it is unsupported. The webhook fills in what is missing, and the message is
   * announced again (`message.updated`); a second delivery finds nothing missing. Conversations
   * were locked (countMessages) before these messages, the order every writer keeps.
   */
  private async completeMessages(
    tx: pg.PoolClient,
    plans: Plan[],
    stored: { accountId: string; platformMessageId: string | null }[],
  ) {
    const inserted = new Set(stored.map((m) => `${m.accountId}:${m.platformMessageId}`));
    const details = plans.flatMap(({ item, account }) =>
      item.type === 'dm' && !inserted.has(`${account.id}:${item.platformId}`) && carriesDetails(item)
        ? [{ item, account }]
        : [],
    );
    if (details.length === 0) return [];
    return this.deps.store.completeMessages(
      tx,
      details.map(({ item, account }) => ({
        accountId: account.id,
        platformId: item.platformId,
        attachments: item.attachments,
        story: item.story,
        unsupported: item.unsupported,
        parentPlatformId: item.parentPlatformId,
      })),
    );
  }

  /**
   * Each item with the accounts it is about (every workspace that connected that Page or
   * profile) that are active; a Page or profile nobody connected takes nothing (acknowledged and
   * left). One expired, revoked, in error or gone takes nothing: no conversation, no message, no
   * event. Its part of the webhook is dropped (and acked: Meta and JetStream would only send it
   * again), with one line naming the account and its status, and, for new messages (`markMissed`),
   * marked, so that the import when the account is active again brings what it carried (CatchUp).
   */
  private async activeTargets<T extends Located>(items: T[], markMissed: boolean): Promise<Target<T>[]> {
    const { accounts, imports, logger } = this.deps;
    const targetsOf = async (item: T) =>
      (await accounts.withPlatformId(item.network, item.accountPlatformId)).map((account) => ({
        item,
        account,
      }));
    const targets = (await Promise.all(items.map(targetsOf))).flat();
    const dropped = targets.filter((t) => t.account.status !== 'active');
    if (dropped.length === 0) return targets;
    for (const account of new Map(dropped.map((t) => [t.account.id, t.account])).values())
      logger.info(
        { account: account.id, status: account.status },
        'webhook dropped: the account is not active',
      );
    if (markMissed) await imports.markMissed(dropped.map((t) => ({ account: t.account, at: t.item.at })));
    return targets.filter((t) => t.account.status === 'active');
  }

  /** A target with its conversation, looked up first (contact, object). */
  private async plan({ item, account }: Target): Promise<Plan> {
    return { item, account, conversation: await this.conversationOf(item, account) };
  }

  private async conversationOf(item: InboundItem, account: KnownAccount): Promise<NewConversation> {
    const base = {
      id: newId('conversation'),
      partnerId: account.partnerId,
      workspaceId: account.workspaceId,
      accountId: account.id,
      network: account.network,
      at: this.deps.now(),
    };
    if (item.type === 'dm') {
      const contact = await this.deps.lookups.contact(account, item.contactId);
      return { ...base, kind: 'dm', threadKey: item.contactId, contact, object: null };
    }
    const object = await this.deps.lookups.object(account, item.objectId, item.permalink);
    return { ...base, kind: 'comments', threadKey: item.objectId, contact: null, object };
  }

  /**
   * Records the echo of our app's send, or the account's own comment: it completes a send in
   * flight when one matches, else it is a message of its own. Answers the id to announce, if any.
   */
  private async recordOurs(tx: pg.PoolClient, plan: Plan): Promise<string | undefined> {
    const { store, now } = this.deps;
    const { item, account } = plan;
    const conversationId = await store.ensureConversation(tx, plan.conversation);
    if (await store.messageByPlatformId(tx, account.id, item.platformId)) return undefined;
    // The conversation first (its count), then the message: the order a send locks them in.
    await store.countMessage(tx, conversationId, { at: item.at, inbound: false, unread: false }, now());
    const message = this.messageOf(plan, conversationId);
    // The send keeps what the echo says of it: the network's id and time, and its copy of the files.
    const adopted = await adoptPendingSend(tx, { ...message, platformId: item.platformId, at: item.at });
    if (adopted) return adopted;
    return (await store.insertMessage(tx, message)) ? message.id : undefined;
  }

  /** The message an item records in its conversation. */
  private messageOf({ item, account, conversation }: Plan, conversationId: string): NewMessage {
    const outbound = isOutbound(item);
    return {
      id: newId('message'),
      conversationId,
      partnerId: account.partnerId,
      workspaceId: account.workspaceId,
      accountId: account.id,
      direction: outbound ? 'outbound' : 'inbound',
      kind: item.type === 'dm' ? 'message' : item.parentId ? 'reply' : 'comment',
      platformMessageId: item.platformId,
      sender: senderOf(item, account, conversation.contact),
      text: item.text,
      attachments: item.type === 'dm' ? item.attachments : [],
      parentPlatformId: item.type === 'comment' ? item.parentId : item.parentPlatformId,
      story: item.type === 'dm' ? item.story : null,
      unsupported: item.type === 'dm' && item.unsupported,
      source: outbound ? 'network' : null,
      state: 'sent',
      idempotencyKey: null,
      requestHash: null,
      createdAt: item.at,
      storedAt: this.deps.now(),
    };
  }

  /** An echo of our app's send, or the account's own comment: possibly one we are sending now. */
  private mayBeOurs(item: InboundItem): boolean {
    return item.type === 'comment' || item.appId === this.deps.appId;
  }
}

/** What a DM's webhook tells that the network's API may not have (see completeMessages). */
const carriesDetails = (item: DmItem) =>
  item.attachments.length > 0 || item.story !== null || item.unsupported || item.parentPlatformId !== null;

/** Sent by the business: an echo, or the account's own comment. */
const isOutbound = (item: InboundItem) => (item.type === 'dm' ? item.echo : item.self);

function senderOf(item: DmItem | CommentItem, account: KnownAccount, contact: NewConversation['contact']) {
  const business = { id: account.platformId, name: null, handle: null };
  if (item.type === 'comment') return item.self ? business : item.from;
  if (item.echo) return business;
  return { id: item.contactId, name: contact?.name ?? null, handle: contact?.handle ?? null };
}

/** Conversations are locked in one order by every writer, so two batches never deadlock. */
function byThread(a: Plan, b: Plan): number {
  const [x, y] = [threadOf(a.conversation), threadOf(b.conversation)];
  return x < y ? -1 : x > y ? 1 : 0;
}
