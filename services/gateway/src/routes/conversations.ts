import { conversationView, messageView } from '@svc/contracts/public';
import { z } from 'zod';
import { grpcCaller, originOf, type Principal } from '../auth/principal.ts';
import type { InboxClient } from '../clients.ts';
import { type IdempotencyClaim, markReplay } from '../http/idempotency.ts';
import { JsonText, jsonText, pagedJsonText } from '../http/json-text.ts';
import { type AnyRoute, defineRoute } from '../http/route.ts';
import { idField, paged, pagination, pathId, queryBoolean, timestamp } from '../http/schemas.ts';

export const conversationParams = z.strictObject({ id: pathId('conversation', 'conversation') });

/** A send's body: the same for REST, the widget and MCP (each names its own source). */
export const sendMessageBody = z.strictObject({
  text: z.string().max(8000).optional().describe('the message, comment or reply'),
  media: z
    .array(idField('media', 'media'))
    .max(1)
    .optional()
    .describe(
      'one image from the media library (direct messages only; text and an image go as two messages)',
    ),
  reply_to: idField('message', 'message')
    .optional()
    .describe('comment threads: the comment answered (a reply to a reply answers its top-level comment)'),
  tag: z
    .enum(['human_agent'])
    .optional()
    .describe('direct messages: a human agent may answer for 7 days after the last message'),
});

export const privateReplyBody = z.strictObject({ text: z.string().min(1).max(2000) });

export const conversationListQuery = z.strictObject({
  ...pagination,
  workspace: idField('workspace', 'workspace').optional(),
  account: idField('account', 'account').optional(),
  kind: z.enum(['dm', 'comments']).optional(),
  unread: queryBoolean.describe('only conversations with (true) or without (false) unread messages'),
  archived: queryBoolean.describe('only archived (true) or not archived (false) conversations'),
  since: timestamp.optional().describe('only conversations with activity after this instant'),
  starting_after: z
    .string()
    .min(1)
    .max(200)
    .optional()
    .describe(
      'the next_cursor of the previous page: the page right after it (instead of page). A conversation with new activity moves to the front, so it is never listed twice, and every other one is listed once',
    ),
});

/**
 * A page of conversations: the list envelope, plus cursor paging in the Stripe manner (`has_more`,
 * and `next_cursor` to pass as `starting_after`), which new activity does not shift.
 */
export const conversationPage = paged(conversationView).extend({
  has_more: z.boolean().describe('more conversations follow this page'),
  next_cursor: z
    .string()
    .nullable()
    .describe('pass it as starting_after for the next page; null when has_more is false'),
});

/** The page's JSON text, the records as inbox built them. */
export function conversationPageText(
  listed: { conversationsJson: string[]; total: number; hasMore: boolean; nextCursor: string },
  query: { page: number; limit: number },
): JsonText {
  const cursor = listed.nextCursor ? JSON.stringify(listed.nextCursor) : 'null';
  const { page, limit } = query;
  return new JsonText(
    `{"data":[${listed.conversationsJson.join(',')}],"page":${page},"limit":${limit},"total":${listed.total},` +
      `"has_more":${listed.hasMore},"next_cursor":${cursor}}`,
  );
}

export const messageParams = z.strictObject({ id: pathId('message', 'message') });

export const messageListQuery = z.strictObject({
  ...pagination,
  since: timestamp.optional().describe('only messages written after this instant'),
});

export const conversationUpdateBody = z.strictObject({
  read: z.literal(true).optional().describe('true resets unread_count'),
  archived: z.boolean().optional(),
});

type Source = 'api' | 'widget' | 'mcp';

/** The inbox calls behind REST, the widget and MCP, so each surface sends exactly the same way. */
export function inboxCalls(inbox: InboxClient) {
  return {
    get: (principal: Principal, conversationId: string) =>
      inbox.getConversation({ caller: grpcCaller(principal), conversationId }),
    update: (principal: Principal, conversationId: string, body: z.infer<typeof conversationUpdateBody>) =>
      inbox.updateConversation({
        caller: grpcCaller(principal),
        conversationId,
        read: body.read ?? false,
        archived: body.archived,
      }),
    messages: (principal: Principal, conversationId: string, query: z.infer<typeof messageListQuery>) =>
      inbox.listMessages({
        caller: grpcCaller(principal),
        conversationId,
        since: query.since ?? '',
        page: query.page,
        limit: query.limit,
      }),
    privateReply: (
      principal: Principal,
      messageId: string,
      body: z.infer<typeof privateReplyBody>,
      source: Source,
      idempotency: IdempotencyClaim | undefined,
    ) =>
      inbox.sendPrivateReply({
        caller: grpcCaller(principal),
        messageId,
        text: body.text,
        source,
        idempotency,
      }),
    list: (principal: Principal, query: z.infer<typeof conversationListQuery>) =>
      inbox.listConversations({
        caller: grpcCaller(principal),
        workspaceId: query.workspace ?? '',
        accountId: query.account ?? '',
        kind: query.kind ?? '',
        unread: query.unread,
        archived: query.archived,
        since: query.since ?? '',
        page: query.page,
        limit: query.limit,
        startingAfter: query.starting_after ?? '',
      }),
    send: (
      principal: Principal,
      conversationId: string,
      body: z.infer<typeof sendMessageBody>,
      source: Source,
      idempotency: IdempotencyClaim | undefined,
    ) =>
      inbox.sendMessage({
        caller: grpcCaller(principal),
        conversationId,
        text: body.text ?? '',
        mediaIds: body.media ?? [],
        replyTo: body.reply_to ?? '',
        tag: body.tag ?? '',
        source,
        idempotency,
      }),
  };
}

export function conversationRoutes(inbox: InboxClient): AnyRoute[] {
  const calls = inboxCalls(inbox);
  return [
    defineRoute({
      method: 'GET',
      url: '/v1/conversations',
      summary:
        'List conversations (DM threads and comment threads), latest activity first; page with starting_after = next_cursor',
      permission: 'objects',
      query: conversationListQuery,
      status: 200,
      response: conversationPage,
      async handler({ principal, query }) {
        return conversationPageText(await calls.list(principal, query), query);
      },
    }),
    defineRoute({
      method: 'GET',
      url: '/v1/conversations/:id',
      summary: 'Read a conversation, with its reply window',
      permission: 'objects',
      params: conversationParams,
      status: 200,
      response: conversationView,
      async handler({ principal, params }) {
        return jsonText((await calls.get(principal, params.id)).conversationJson);
      },
    }),
    defineRoute({
      method: 'PATCH',
      url: '/v1/conversations/:id',
      summary: 'Mark a conversation read (unread_count back to 0) or (un)archive it',
      permission: 'objects',
      params: conversationParams,
      body: conversationUpdateBody,
      status: 200,
      response: conversationView,
      async handler({ principal, params, body }) {
        return jsonText((await calls.update(principal, params.id, body)).conversationJson);
      },
    }),
    defineRoute({
      method: 'GET',
      url: '/v1/conversations/:id/messages',
      summary: 'List the messages of a conversation, oldest first',
      permission: 'objects',
      params: conversationParams,
      query: messageListQuery,
      status: 200,
      response: paged(messageView),
      async handler({ principal, params, query }) {
        const { messagesJson, total } = await calls.messages(principal, params.id, query);
        return pagedJsonText(messagesJson, query.page, query.limit, total);
      },
    }),
    defineRoute({
      method: 'POST',
      url: '/v1/conversations/:id/messages',
      summary:
        'Send a direct message, reply to a comment or comment on the object; 409 when the window is closed, 502 when the network refuses',
      permission: 'objects',
      params: conversationParams,
      body: sendMessageBody,
      status: 201,
      response: messageView,
      async handler({ principal, params, body, reply, idempotency }) {
        const sent = await calls.send(principal, params.id, body, originOf(principal), idempotency);
        markReplay(reply, sent.replayed);
        return jsonText(sent.messageJson);
      },
    }),
    defineRoute({
      method: 'POST',
      url: '/v1/messages/:id/private-reply',
      summary: 'Send the one private reply (a direct message) the network allows to a comment, within 7 days',
      permission: 'objects',
      params: messageParams,
      body: privateReplyBody,
      status: 201,
      response: messageView,
      async handler({ principal, params, body, reply, idempotency }) {
        const sent = await calls.privateReply(principal, params.id, body, originOf(principal), idempotency);
        markReplay(reply, sent.replayed);
        return jsonText(sent.messageJson);
      },
    }),
    defineRoute({
      method: 'POST',
      url: '/v1/accounts/:id/inbox-sync',
      summary: "Import the account's recent conversations and comments again (nothing is duplicated)",
      permission: 'objects',
      params: z.strictObject({ id: pathId('account', 'account') }),
      status: 200,
      response: z.object({
        conversations: z.number().int().describe('conversations read from the network'),
        messages: z.number().int().describe('messages that were new'),
      }),
      async handler({ principal, params }) {
        const { conversations, messages } = await inbox.syncAccount({
          caller: grpcCaller(principal),
          accountId: params.id,
        });
        return { conversations, messages };
      },
    }),
  ];
}
