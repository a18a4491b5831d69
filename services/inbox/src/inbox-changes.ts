import type { KnownAccount } from '@svc/directory';
import type { Logger } from '@svc/logging';
import type pg from 'pg';
import type { InboxEvents } from './inbox-events.ts';
import type { InboxStore } from './inbox-store.ts';
import { changedContent, type MessageContent } from './message-changes.ts';
import type { ChangeItem, InboxChange, ReadItem } from './meta-items.ts';

/** A change and one account it is about (every workspace that connected that Page or profile). */
export interface ChangeTarget {
  item: InboxChange;
  account: KnownAccount;
}

/**
 * Applies what a webhook says changed about stored messages and conversations, in one
 * transaction: read receipts first (conversations), then each changed message (locked in one
 * order, so two webhooks never deadlock), announced with `message.updated` in the same
 * transaction. A change to a message we never stored (older than our history, or from before the
 * account connected) is acknowledged and left: there is nothing of ours to change.
 */
export class InboxChanges {
  constructor(
    private readonly deps: { store: InboxStore; events: InboxEvents; logger: Logger; now: () => Date },
  ) {}

  async apply(targets: ChangeTarget[]): Promise<void> {
    if (targets.length === 0) return;
    const { store, events, now } = this.deps;
    const reads = targets.filter((t): t is ChangeTarget & { item: ReadItem } => t.item.type === 'read');
    const changes = targets.filter((t): t is ChangeTarget & { item: ChangeItem } => t.item.type === 'change');
    const updated = await store.write(async (tx) => {
      for (const { item, account } of reads)
        await store.markReadByContact(tx, { accountId: account.id, ...item }, now());
      const ids: string[] = [];
      for (const group of byMessage(changes)) {
        const id = await this.changeMessage(tx, group);
        if (id) ids.push(id);
      }
      return { result: ids.length, events: await events.announce(tx, ids, 'message.updated') };
    });
    this.deps.logger.debug({ changes: targets.length, updated }, 'provider webhook changes applied');
  }

  /** Applies one message's changes in the order Meta sent them; answers its id when it changed. */
  private async changeMessage(tx: pg.PoolClient, group: (ChangeTarget & { item: ChangeItem })[]) {
    const first = group[0];
    if (!first) return undefined;
    const row = await this.deps.store.lockMessage(tx, first.account.id, first.item.platformId);
    if (!row) return undefined;
    let content: MessageContent = row;
    let changed = false;
    for (const { item } of group) {
      const next = changedContent(content, item.change);
      if (next) [content, changed] = [next, true];
    }
    if (!changed) return undefined;
    await this.deps.store.rewriteMessage(tx, row.id, content);
    return row.id;
  }
}

/** Changes grouped by message (account and network id), the groups in lock order, each in body order. */
function byMessage<T extends { item: ChangeItem; account: KnownAccount }>(targets: T[]): T[][] {
  const groups = new Map<string, T[]>();
  for (const target of targets) {
    const key = `${target.account.id}\u0000${target.item.platformId}`;
    groups.set(key, [...(groups.get(key) ?? []), target]);
  }
  return [...groups.entries()].sort(([a], [b]) => (a < b ? -1 : a > b ? 1 : 0)).map(([, group]) => group);
}
