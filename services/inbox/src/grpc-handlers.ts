import { callerOf, type InboxService, type ServiceImplementation } from '@svc/contracts';
import { type RequestOrigin, requestOrigin } from '@svc/contracts/public';
import type { AccountsDirectory, WorkspaceDirectory } from '@svc/directory';
import { errors } from '@svc/errors';
import type { CatchUp } from './catch-up.ts';
import { decodeCursor, encodeCursor } from './conversation-cursor.ts';
import type { InboxStore } from './inbox-store.ts';
import type { PrivateReplies } from './private-replies.ts';
import type { Sender } from './sender.ts';
import { conversationView, messageView } from './views.ts';

function sourceOf(value: string): RequestOrigin {
  const source = requestOrigin.safeParse(value);
  if (!source.success) throw errors.validation('source', 'unknown source');
  return source.data;
}

function parseSince(since: string): Date | undefined {
  if (!since) return undefined;
  const date = new Date(since);
  if (Number.isNaN(date.getTime())) throw errors.validation('since', 'since must be an ISO-8601 timestamp');
  return date;
}

export function inboxHandlers(deps: {
  store: InboxStore;
  workspaces: WorkspaceDirectory;
  accounts: AccountsDirectory;
  sender: Sender;
  privateReplies: PrivateReplies;
  catchUp: CatchUp;
  now: () => Date;
}): ServiceImplementation<typeof InboxService> {
  const { store, workspaces, accounts, sender, privateReplies, catchUp, now } = deps;
  const conversationJson = async (caller: ReturnType<typeof callerOf>, id: string) =>
    JSON.stringify(conversationView(await store.conversation(caller, id), now()));
  return {
    async listConversations(req) {
      const caller = callerOf(req.caller);
      const after = req.startingAfter ? decodeCursor(req.startingAfter) : undefined;
      if (after && req.page > 1)
        throw errors.validation('page', 'page cannot be combined with starting_after');
      if (req.workspaceId) await workspaces.assertOwned(caller, req.workspaceId);
      const { rows, total, hasMore } = await store.conversations(caller, {
        workspaceId: req.workspaceId,
        accountId: req.accountId,
        kind: req.kind,
        unread: req.unread,
        archived: req.archived,
        since: parseSince(req.since),
        page: req.page,
        limit: req.limit,
        after,
      });
      const last = rows.at(-1);
      return {
        conversationsJson: rows.map((r) => JSON.stringify(conversationView(r, now()))),
        total,
        hasMore,
        nextCursor: hasMore && last ? encodeCursor({ at: last.lastMessageAt, id: last.id }) : '',
      };
    },
    async getConversation(req) {
      return { conversationJson: await conversationJson(callerOf(req.caller), req.conversationId) };
    },
    async updateConversation(req) {
      const caller = callerOf(req.caller);
      const conversation = await store.conversation(caller, req.conversationId);
      await store.updateConversation(conversation.id, { read: req.read, archived: req.archived }, now());
      return { conversationJson: await conversationJson(caller, conversation.id) };
    },
    async listMessages(req) {
      const conversation = await store.conversation(callerOf(req.caller), req.conversationId);
      const query = { since: parseSince(req.since), page: req.page, limit: req.limit };
      const { rows, total } = await store.messages(conversation.id, query);
      return { messagesJson: rows.map((r) => JSON.stringify(messageView(r, now()))), total };
    },
    async sendMessage(req) {
      const { message, replayed } = await sender.send(callerOf(req.caller), {
        conversationId: req.conversationId,
        text: req.text,
        mediaIds: req.mediaIds,
        replyTo: req.replyTo,
        tag: req.tag,
        source: sourceOf(req.source),
        idempotency: req.idempotency,
      });
      return { messageJson: JSON.stringify(message), replayed };
    },
    async sendPrivateReply(req) {
      const { message, replayed } = await privateReplies.send(callerOf(req.caller), {
        messageId: req.messageId,
        text: req.text,
        source: sourceOf(req.source),
        idempotency: req.idempotency,
      });
      return { messageJson: JSON.stringify(message), replayed };
    },
    async syncAccount(req) {
      const [account] = await accounts.visible(callerOf(req.caller), [req.accountId]);
      if (!account) throw errors.notFound('account');
      return catchUp.run(account, (await accounts.token(account.id)).token);
    },
  };
}
