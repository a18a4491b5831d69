import type { MetaWebhook } from '@svc/bus';
import { newId } from '@svc/ids';
import type { Logger } from '@svc/logging';
import type pg from 'pg';
import type { AccountsDirectory, InboxAccount } from './accounts-directory.ts';
import type { InboxEvents } from './inbox-events.ts';
import type { InboxStore, NewConversation } from './inbox-store.ts';
import { type CommentItem, type DmItem, type InboundItem, inboxItems } from './meta-webhook.ts';
import type { NetworkLookups } from './network-lookups.ts';

/** One item for one account it is about, with its conversation as it would be created. */
interface Plan {
  item: InboundItem;
  account: InboxAccount;
  conversation: NewConversation;
}

/**
 * Turns the provider webhooks on the PROVIDER stream into messages, exactly once: Meta delivers at
 * least once and out of order, JetStream redelivers after a crash, so a message is recorded only
 * if its network id is new for its account, and its event is written in the same transaction. The
 * echo of a message we sent marks ours as seen instead of adding one; a message the business sent
 * from the network's own app is recorded as outbound with source `network`.
 */
export class Intake {
  constructor(
    private readonly deps: {
      store: InboxStore;
      accounts: AccountsDirectory;
      lookups: NetworkLookups;
      events: InboxEvents;
      appId: string;
      logger: Logger;
      now: () => Date;
    },
  ) {}

  async receive(webhook: MetaWebhook): Promise<void> {
    const items = inboxItems(JSON.parse(webhook.body));
    if (items.length === 0) return;
    const plans = (await Promise.all(items.map((item) => this.plan(item)))).flat().sort(byThread);
    if (plans.length === 0) return;
    const { store, events } = this.deps;
    const recorded = await store.write(async (tx) => {
      const ids: string[] = [];
      for (const plan of plans) {
        const id = await this.record(tx, plan);
        if (id) ids.push(id);
      }
      return { result: ids, events: await events.announce(tx, ids) };
    });
    this.deps.logger.debug({ items: items.length, recorded: recorded.length }, 'provider webhook handled');
  }

  /** The accounts an item is about (every workspace that connected it), with what to look up first. */
  private async plan(item: InboundItem): Promise<Plan[]> {
    const accounts = await this.deps.accounts.withPlatformId(item.network, item.accountPlatformId);
    return Promise.all(
      accounts.map(async (account) => ({
        item,
        account,
        conversation: await this.conversationOf(item, account),
      })),
    );
  }

  private async conversationOf(item: InboundItem, account: InboxAccount): Promise<NewConversation> {
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

  /** Records one item; answers the id of a message to announce, if any. */
  private async record(tx: pg.PoolClient, plan: Plan): Promise<string | undefined> {
    const { store, now } = this.deps;
    const { item, account } = plan;
    const conversationId = await store.ensureConversation(tx, plan.conversation);
    const outbound = item.type === 'dm' ? item.echo : item.self;
    if (await store.messageByPlatformId(tx, account.id, item.platformId)) return undefined;
    if (outbound && this.mayBeOurs(item)) {
      const adopted = await store.adoptSending(tx, conversationId, item.text, item.platformId);
      if (adopted) {
        await store.countMessage(tx, conversationId, { at: item.at, inbound: false, unread: false }, now());
        return adopted;
      }
    }
    const id = newId('message');
    const inserted = await store.insertMessage(tx, {
      id,
      conversationId,
      partnerId: account.partnerId,
      workspaceId: account.workspaceId,
      accountId: account.id,
      direction: outbound ? 'outbound' : 'inbound',
      kind: item.type === 'dm' ? 'message' : item.parentId ? 'reply' : 'comment',
      platformMessageId: item.platformId,
      sender: senderOf(item, account, plan.conversation.contact),
      text: item.text,
      attachments: item.type === 'dm' ? item.attachments : [],
      parentPlatformId: item.type === 'comment' ? item.parentId : null,
      source: outbound ? 'network' : null,
      state: 'sent',
      idempotencyKey: null,
      requestHash: null,
      createdAt: item.at,
      storedAt: now(),
    });
    if (!inserted) return undefined;
    const counts = { at: item.at, inbound: !outbound, unread: !outbound };
    await store.countMessage(tx, conversationId, counts, now());
    return id;
  }

  /** An echo of our app's send, or the account's own comment: possibly one we are sending now. */
  private mayBeOurs(item: InboundItem): boolean {
    return item.type === 'comment' || item.appId === this.deps.appId;
  }
}

function senderOf(item: DmItem | CommentItem, account: InboxAccount, contact: NewConversation['contact']) {
  const business = { id: account.platformId, name: null, handle: null };
  if (item.type === 'comment') return item.self ? business : item.from;
  if (item.echo) return business;
  return { id: item.contactId, name: contact?.name ?? null, handle: contact?.handle ?? null };
}

/** Conversations are locked in one order by every writer, so two batches never deadlock. */
function byThread(a: Plan, b: Plan): number {
  const key = (p: Plan) => `${p.account.id}:${p.conversation.kind}:${p.conversation.threadKey}`;
  return key(a) < key(b) ? -1 : key(a) > key(b) ? 1 : 0;
}
