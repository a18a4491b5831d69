import { conversationView, messageView } from '@svc/contracts/public';
import { z } from 'zod';
import { grpcCaller } from '../auth/principal.ts';
import type { InboxClient } from '../clients.ts';
import { JsonText, jsonText, pagedJsonText } from '../http/json-text.ts';
import { idField, paged, pagination, pathId, queryFlag, timestamp } from '../http/schemas.ts';
import { type AnyOperation, answered, defineOperation } from './operation.ts';

const conversationParams = z.strictObject({ id: pathId('conversation', 'conversation') });

const sendMessageBody = z.strictObject({
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

const privateReplyBody = z.strictObject({ text: z.string().min(1).max(2000) });

const conversationListQuery = z.strictObject({
  ...pagination,
  workspace: idField('workspace', 'workspace').optional(),
  account: idField('account', 'account').optional(),
  kind: z.enum(['dm', 'comments']).optional(),
  unread: queryFlag('only conversations with (true) or without (false) unread messages'),
  archived: queryFlag('only archived (true) or not archived (false) conversations'),
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
const conversationPage = paged(conversationView).extend({
  has_more: z.boolean().describe('more conversations follow this page'),
  next_cursor: z
    .string()
    .nullable()
    .describe('pass it as starting_after for the next page; null when has_more is false'),
});

/** The page's JSON text, the records as inbox built them. */
function conversationPageText(
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

const messageParams = z.strictObject({ id: pathId('message', 'message') });

const messageListQuery = z.strictObject({
  ...pagination,
  since: timestamp.optional().describe('only messages written after this instant'),
});

const conversationUpdateBody = z.strictObject({
  read: z.literal(true).optional().describe('true resets unread_count'),
  archived: z.boolean().optional(),
});

const conversationTool = { idArg: 'conversation_id' };

/** The inbox: conversations, their messages, answers, read marks and archive, a sync of an account. */
export function conversationOperations(inbox: InboxClient): AnyOperation[] {
  return [
    defineOperation({
      method: 'GET',
      url: '/v1/conversations',
      summary:
        'List conversations (DM threads and comment threads), latest activity first; page with starting_after = next_cursor',
      permission: 'objects',
      query: conversationListQuery,
      workspaceIn: 'query',
      status: 200,
      response: conversationPage,
      widget: { url: '/v1/embed/conversations', permission: 'embedInbox' },
      tools: [
        {
          name: 'list_conversations',
          title: 'List conversations',
          description:
            'List the conversations of this workspace (direct-message threads and comment threads), latest activity first; filter by account, kind, unread, archived or activity since. For the next page pass next_cursor as starting_after (while has_more is true).',
          readOnly: true,
        },
      ],
      async run({ principal, query }) {
        const listed = await inbox.listConversations({
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
        });
        return conversationPageText(listed, query);
      },
    }),
    defineOperation({
      method: 'GET',
      url: '/v1/conversations/:id',
      summary: 'Read a conversation, with its reply window',
      permission: 'objects',
      params: conversationParams,
      status: 200,
      response: conversationView,
      widget: { url: '/v1/embed/conversations/:id', permission: 'embedInbox' },
      async run({ principal, params }) {
        const { conversationJson } = await inbox.getConversation({
          caller: grpcCaller(principal),
          conversationId: params.id,
        });
        return jsonText(conversationJson);
      },
    }),
    defineOperation({
      method: 'PATCH',
      url: '/v1/conversations/:id',
      summary: 'Mark a conversation read (unread_count back to 0) or (un)archive it',
      permission: 'objects',
      params: conversationParams,
      body: conversationUpdateBody,
      status: 200,
      response: conversationView,
      widget: { url: '/v1/embed/conversations/:id', permission: 'embedInbox' },
      tools: [
        {
          ...conversationTool,
          name: 'mark_conversation_read',
          title: 'Mark a conversation read',
          description: 'Mark a conversation read: its unread_count goes back to 0. Answers the conversation.',
          preset: { read: true },
          omit: ['archived'],
        },
      ],
      async run({ principal, params, body }) {
        const { conversationJson } = await inbox.updateConversation({
          caller: grpcCaller(principal),
          conversationId: params.id,
          read: body.read ?? false,
          archived: body.archived,
        });
        return jsonText(conversationJson);
      },
    }),
    defineOperation({
      method: 'GET',
      url: '/v1/conversations/:id/messages',
      summary: 'List the messages of a conversation, oldest first',
      permission: 'objects',
      params: conversationParams,
      query: messageListQuery,
      status: 200,
      response: paged(messageView),
      widget: { url: '/v1/embed/conversations/:id/messages', permission: 'embedInbox' },
      tools: [
        {
          ...conversationTool,
          name: 'read_messages',
          title: 'Read the messages of a conversation',
          description:
            'List the messages of a conversation, oldest first (text, sender, attachments, direction).',
          readOnly: true,
        },
      ],
      async run({ principal, params, query }) {
        const { messagesJson, total } = await inbox.listMessages({
          caller: grpcCaller(principal),
          conversationId: params.id,
          since: query.since ?? '',
          page: query.page,
          limit: query.limit,
        });
        return pagedJsonText(messagesJson, query.page, query.limit, total);
      },
    }),
    defineOperation({
      method: 'POST',
      url: '/v1/conversations/:id/messages',
      summary:
        'Send a direct message, reply to a comment or comment on the object; 409 when the window is closed, 502 when the network refuses',
      permission: 'objects',
      params: conversationParams,
      body: sendMessageBody,
      status: 201,
      response: messageView,
      widget: { url: '/v1/embed/conversations/:id/messages', permission: 'embedInbox' },
      tools: [
        {
          ...conversationTool,
          name: 'send_message',
          title: 'Send a message or reply',
          description:
            'Send a direct message in a DM conversation, or in a comment thread reply to a comment (reply_to) or comment on the object. Refused with conflict when the messaging window is closed, network_error when the network refuses.',
        },
      ],
      async run({ principal, origin, params, body, idempotency }) {
        const { messageJson, replayed } = await inbox.sendMessage({
          caller: grpcCaller(principal),
          conversationId: params.id,
          text: body.text ?? '',
          mediaIds: body.media ?? [],
          replyTo: body.reply_to ?? '',
          tag: body.tag ?? '',
          source: origin,
          idempotency,
        });
        return answered(jsonText(messageJson), { replayed });
      },
    }),
    defineOperation({
      method: 'POST',
      url: '/v1/messages/:id/private-reply',
      summary: 'Send the one private reply (a direct message) the network allows to a comment, within 7 days',
      permission: 'objects',
      params: messageParams,
      body: privateReplyBody,
      status: 201,
      response: messageView,
      widget: { url: '/v1/embed/messages/:id/private-reply', permission: 'embedInbox' },
      tools: [
        {
          name: 'send_private_reply',
          idArg: 'message_id',
          title: 'Reply privately to a comment',
          description:
            'Send the one private reply (a direct message to its author) the network allows to a comment, within 7 days of it.',
        },
      ],
      async run({ principal, origin, params, body, idempotency }) {
        const { messageJson, replayed } = await inbox.sendPrivateReply({
          caller: grpcCaller(principal),
          messageId: params.id,
          text: body.text,
          source: origin,
          idempotency,
        });
        return answered(jsonText(messageJson), { replayed });
      },
    }),
    defineOperation({
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
      async run({ principal, params }) {
        const { conversations, messages } = await inbox.syncAccount({
          caller: grpcCaller(principal),
          accountId: params.id,
        });
        return { conversations, messages };
      },
    }),
  ];
}
