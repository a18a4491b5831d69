import { graphAttachment } from '../attachments.ts';
import { assertIgAccess, assertPageAccess, requireScope } from '../auth.ts';
import { graphTime } from '../clock.ts';
import type { Ctx, RouteTable } from '../context.ts';
import { type NodeShape, paginate, renderNode } from '../fields.ts';
import { invalidParam, notAuthorizedForObject, pageTokenRequired, unsupportedGet } from '../graph-errors.ts';
import { optionalString } from '../params.ts';
import type { Conversation, Message, Participant, Platform } from '../store.ts';
import type { World } from '../world.ts';
import { sendMessage } from './send.ts';

/** How one side of a thread looks in `from`/`to`/`participants` (facts §4.2). */
function personRef(world: World, platform: Platform, id: string): Record<string, string> {
  const participant = world.store.participants.get(id);
  const ig = world.store.igAccounts.get(id);
  const page = world.store.pages.get(id);
  if (platform === 'instagram') return { username: ig?.username ?? participant?.username ?? 'unknown', id };
  const name = page?.name ?? participant?.name ?? 'Unknown';
  return { name, email: `${id}@facebook.com`, id };
}

/** A message as Graph renders it (facts §4.2): `message` is "" when it is only attachments. */
function messageJson(world: World, platform: Platform, m: Message) {
  const json: Record<string, unknown> = {
    id: m.id,
    created_time: graphTime(m.createdAt),
    from: personRef(world, platform, m.fromId),
    to: { data: [personRef(world, platform, m.toId)] },
    message: m.text ?? '',
  };
  if (m.attachments.length) json.attachments = { data: m.attachments.map(graphAttachment) };
  return json;
}

function conversationShape(world: World, c: Conversation): NodeShape {
  // Only the 20 most recent messages can be read, newest first (facts §4.2).
  const messages = () =>
    c.messageIds
      .flatMap((id) => world.store.messages.get(id) ?? [])
      .reverse()
      .slice(0, 20);
  const last = () => messages()[0];
  return {
    type: 'Conversation',
    defaults: ['id', 'updated_time'],
    fields: {
      id: () => c.id,
      updated_time: () => graphTime(c.updatedAt),
      participants: () => ({
        data: [personRef(world, c.platform, c.participantId), personRef(world, c.platform, c.accountId)],
      }),
      messages: () => ({ data: messages().map((m) => messageJson(world, c.platform, m)) }),
      message_count: () => c.messageIds.length,
      unread_count: () => 0,
      can_reply: () => true,
      snippet: () => last()?.text ?? undefined,
      link: () => `${world.config.publicUrl}/__sandbox/conversations/${c.id}`,
    },
  };
}

function accountOfConversation(world: World, c: Conversation): string {
  return c.platform === 'instagram' ? (world.store.igAccounts.get(c.accountId)?.pageId ?? '') : c.accountId;
}

function listConversations(ctx: Ctx, pageId: string) {
  const token = assertPageAccess(ctx.world, ctx.caller(), pageId);
  const platform: Platform =
    optionalString(ctx.params, 'platform') === 'instagram' ? 'instagram' : 'messenger';
  requireScope(token, platform === 'instagram' ? 'instagram_manage_messages' : 'pages_messaging');
  const page = ctx.world.store.pages.get(pageId);
  const accountId = platform === 'instagram' ? page?.igId : pageId;
  if (!accountId) throw invalidParam('(#100) This Page is not linked to an Instagram account', 2534013);
  const userId = optionalString(ctx.params, 'user_id');
  const list = [...ctx.world.store.conversations.values()]
    .filter(
      (c) => c.accountId === accountId && c.platform === platform && (!userId || c.participantId === userId),
    )
    .sort((a, b) => b.updatedAt - a.updatedAt);
  return paginate(list, ctx.pageRequest(), (c) => renderNode(conversationShape(ctx.world, c), ctx.fields));
}

function messagingToken(ctx: Ctx, pageId: string) {
  const token = assertPageAccess(ctx.world, ctx.caller(), pageId);
  if (token.kind !== 'page') throw pageTokenRequired();
  return token;
}

export const inboxRoutes: RouteTable = {
  'GET page/conversations': listConversations,
  'GET conversation': (ctx, id) => {
    const c = ctx.world.store.conversations.get(id);
    if (!c) throw unsupportedGet(id);
    assertPageAccess(ctx.world, ctx.caller(), accountOfConversation(ctx.world, c));
    return renderNode(conversationShape(ctx.world, c), ctx.fields);
  },
  'GET message': (ctx, id) => {
    const m = ctx.world.store.messages.get(id);
    const c = m ? ctx.world.store.conversations.get(m.conversationId) : undefined;
    if (!m || !c) throw unsupportedGet(id);
    assertPageAccess(ctx.world, ctx.caller(), accountOfConversation(ctx.world, c));
    const json = messageJson(ctx.world, c.platform, m);
    const shape: NodeShape = {
      type: 'Message',
      defaults: ['id', 'created_time'],
      fields: {
        id: () => json.id,
        created_time: () => json.created_time,
        from: () => json.from,
        to: () => json.to,
        message: () => json.message,
        attachments: () => json.attachments,
      },
    };
    return renderNode(shape, ctx.fields);
  },
  'GET participant': (ctx, id) => {
    const p = ctx.world.store.participants.get(id) as Participant;
    const pageId =
      p.platform === 'instagram' ? (ctx.world.store.igAccounts.get(p.accountId)?.pageId ?? '') : p.accountId;
    assertPageAccess(ctx.world, ctx.caller(), pageId);
    const [first = '', ...rest] = (p.name ?? p.username ?? '').split(' ');
    const shape: NodeShape = {
      type: p.platform === 'instagram' ? 'InstagramUser' : 'User',
      defaults: ['id', 'name'],
      fields: {
        id: () => p.id,
        name: () => p.name ?? p.username,
        username: () => p.username ?? undefined,
        first_name: () => first,
        last_name: () => rest.join(' '),
        profile_pic: () => `${ctx.world.config.publicUrl}/__sandbox/avatar/${p.id}.jpg`,
      },
    };
    return renderNode(shape, ctx.fields);
  },
  'POST page/messages': (ctx, pageId) => sendMessage(ctx, messagingToken(ctx, pageId), pageId),
  'POST instagram/messages': (ctx, igId) => {
    const token = assertIgAccess(ctx.world, ctx.caller(), igId);
    if (token.kind !== 'page' || !token.pageId) throw notAuthorizedForObject();
    return sendMessage(ctx, token, token.pageId);
  },
};
