import type {
  Conversation,
  GraphAttachment,
  GraphClient,
  GraphComment,
  GraphMessage,
} from '@svc/graph-client';
import { newId } from '@svc/ids';
import type { Logger } from '@svc/logging';
import type { AccountsDirectory, InboxAccount } from './accounts-directory.ts';
import type { NewConversation, NewMessage } from './inbox-rows.ts';
import type { InboxStore } from './inbox-store.ts';
import type { MessageRow } from './views.ts';

/** How much history an import reads: what the networks let us read (facts §4.2) and what an inbox shows. */
const DM_CONVERSATIONS = 50;
const OBJECTS = 25;
/**
 * History is what is older than this when the import starts. Newer messages are the webhooks'
 * (which announce them); an import that took one would swallow its event.
 */
const LIVE_MARGIN_MS = 60_000;

interface Imported {
  conversations: number;
  messages: number;
}

/**
 * Imports an account's recent history: its DM conversations (the 20 messages the network lets us
 * read of each) and the comments of its most recent objects. It closes the gap webhooks leave
 * (before the account connected, while we were down); no event is emitted for history. Each
 * message is stored once by its network id, so running it twice, or beside the webhooks, adds
 * nothing twice. Only messages older than a minute before the import are history: newer ones
 * are left to their webhooks, which announce them.
 */
export class CatchUp {
  constructor(
    private readonly deps: {
      store: InboxStore;
      accounts: AccountsDirectory;
      graph: GraphClient;
      logger: Logger;
      now: () => Date;
    },
  ) {}

  async run(account: InboxAccount): Promise<Imported> {
    const token = await this.deps.accounts.token(account.id);
    const dms = await this.importConversations(account, token);
    const comments = await this.importComments(account, token);
    const imported = {
      conversations: dms.conversations + comments.conversations,
      messages: dms.messages + comments.messages,
    };
    this.deps.logger.info({ account: account.id, ...imported }, 'inbox history imported');
    return imported;
  }

  private async importConversations(account: InboxAccount, token: string): Promise<Imported> {
    const platform = account.network === 'photo_network' ? 'instagram' : 'messenger';
    const page = await this.deps.graph.inbox.conversations(token, account.pageId, {
      platform,
      limit: DM_CONVERSATIONS,
    });
    let messages = 0;
    for (const conversation of page.data) messages += await this.importConversation(account, conversation);
    return { conversations: page.data.length, messages };
  }

  private async importConversation(account: InboxAccount, conversation: Conversation): Promise<number> {
    const person = conversation.participants?.data.find((p) => p.id !== account.platformId);
    if (!person) return 0;
    const contact = {
      id: person.id,
      name: person.name ?? person.username ?? null,
      handle: person.username ?? null,
      avatar_url: null,
    };
    const rows = (conversation.messages?.data ?? []).map((m) => ({
      platformId: m.id,
      outbound: m.from?.id === account.platformId,
      kind: 'message' as const,
      sender: senderOf(m.from),
      text: m.message ?? null,
      attachments: attachmentsOf(m),
      parentPlatformId: null,
      at: new Date(m.created_time ?? this.deps.now()),
    }));
    return this.store(account, { kind: 'dm', threadKey: person.id, contact, object: null }, rows);
  }

  private async importComments(account: InboxAccount, token: string): Promise<Imported> {
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
      messages += await this.store(
        account,
        { kind: 'comments', threadKey: object.id, contact: null, object },
        rows,
      );
    }
    return { conversations, messages };
  }

  /** One conversation and its messages in one transaction; answers how many were new. */
  private async store(
    account: InboxAccount,
    thread: Pick<NewConversation, 'kind' | 'threadKey' | 'contact' | 'object'>,
    rows: HistoryRow[],
  ): Promise<number> {
    const { store, now } = this.deps;
    const cutoff = now().getTime() - LIVE_MARGIN_MS;
    const history = rows.filter((row) => row.at.getTime() < cutoff);
    if (history.length === 0) return 0;
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
        history.map((row) => historyMessage(row, { ...base, conversationId }, at)),
      );
      // History is read already: it counts in the conversation but never as unread.
      const counts = stored.map((m) => ({
        conversationId,
        at: m.created_at,
        inbound: m.direction === 'inbound',
        unread: false,
      }));
      if (counts.length > 0) await store.countMessages(tx, counts, at);
      return { result: stored.length, events: [] };
    });
  }
}

/** A message read from the network's history, as the store writes it. */
function historyMessage(
  row: HistoryRow,
  place: Pick<NewMessage, 'conversationId' | 'partnerId' | 'workspaceId' | 'accountId'>,
  storedAt: Date,
): NewMessage {
  return {
    id: newId('message'),
    ...place,
    direction: row.outbound ? 'outbound' : 'inbound',
    kind: row.kind,
    platformMessageId: row.platformId,
    sender: row.sender,
    text: row.text,
    attachments: row.attachments,
    parentPlatformId: row.parentPlatformId,
    source: row.outbound ? 'network' : null,
    state: 'sent',
    idempotencyKey: null,
    requestHash: null,
    createdAt: row.at,
    storedAt,
  };
}

interface HistoryRow {
  platformId: string;
  outbound: boolean;
  kind: MessageRow['kind'];
  sender: MessageRow['sender'];
  text: string | null;
  attachments: MessageRow['attachments'];
  parentPlatformId: string | null;
  at: Date;
}

function senderOf(
  from: { id: string; name?: string | undefined; username?: string | undefined } | undefined,
) {
  return from
    ? { id: from.id, name: from.name ?? from.username ?? null, handle: from.username ?? null }
    : null;
}

function attachmentsOf(message: GraphMessage): MessageRow['attachments'] {
  return (message.attachments?.data ?? []).flatMap((a: GraphAttachment) => {
    const url = a.image_data?.url ?? a.video_data?.url ?? a.file_url;
    if (!url) return [];
    const type = a.image_data ? 'image' : a.video_data ? 'video' : 'file';
    return [
      {
        type,
        url,
        ...(a.mime_type ? { mime: a.mime_type } : {}),
        ...(a.image_data?.width ? { width: a.image_data.width } : {}),
        ...(a.image_data?.height ? { height: a.image_data.height } : {}),
      },
    ];
  });
}

/** Instagram nests replies under their top-level comment; they carry no parent_id there. */
function repliesOf(comment: GraphComment): GraphComment[] {
  return (comment.replies?.data ?? []).map((r) => ({ ...r, parent_id: comment.id }));
}

function commentRow(account: InboxAccount, objectId: string, c: GraphComment, now: Date): HistoryRow {
  const parent = c.parent_id ?? c.parent?.id ?? null;
  return {
    platformId: c.id,
    outbound: c.from?.id === account.platformId,
    kind: parent && parent !== objectId ? 'reply' : 'comment',
    sender: senderOf(c.from ? { ...c.from, username: c.from.username ?? c.username } : undefined),
    text: c.text ?? c.message ?? null,
    attachments: [],
    parentPlatformId: parent && parent !== objectId ? parent : null,
    at: new Date(c.timestamp ?? c.created_time ?? now),
  };
}
