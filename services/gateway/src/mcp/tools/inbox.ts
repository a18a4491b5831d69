import { conversationView, messageView } from '@svc/contracts/public';
import { z } from 'zod';
import type { ServiceClients } from '../../clients.ts';
import { jsonText, pagedJsonText } from '../../http/json-text.ts';
import { paged } from '../../http/schemas.ts';
import {
  conversationListQuery,
  conversationPage,
  conversationPageText,
  conversationParams,
  inboxCalls,
  messageListQuery,
  messageParams,
  privateReplyBody,
  sendMessageBody,
} from '../../routes/conversations.ts';
import { type AnyTool, defineTool } from '../tool.ts';
import { claim, idempotencyKey } from './posts.ts';

const conversation = { arg: 'conversation_id', params: conversationParams };

/** The inbox of the request's workspace: conversations, their messages, answers, read marks. */
export function inboxTools(clients: ServiceClients): AnyTool[] {
  const inbox = inboxCalls(clients.inbox);
  return [
    defineTool({
      name: 'list_conversations',
      title: 'List conversations',
      description:
        'List the conversations of this workspace (direct-message threads and comment threads), latest activity first; filter by account, kind, unread ("true"/"false"), archived or activity since. For the next page pass next_cursor as starting_after (while has_more is true).',
      input: conversationListQuery.omit({ workspace: true }),
      output: conversationPage,
      readOnly: true,
      async run({ caller, args }) {
        const listed = await inbox.list(caller.scoped, { ...args, workspace: caller.workspaceId });
        return conversationPageText(listed, args);
      },
    }),
    defineTool({
      name: 'read_messages',
      title: 'Read the messages of a conversation',
      description:
        'List the messages of a conversation, oldest first (text, sender, attachments, direction).',
      id: conversation,
      input: messageListQuery,
      output: paged(messageView),
      readOnly: true,
      async run({ caller, id, args }) {
        const { messagesJson, total } = await inbox.messages(caller.scoped, id, args);
        return pagedJsonText(messagesJson, args.page, args.limit, total);
      },
    }),
    defineTool({
      name: 'send_message',
      title: 'Send a message or reply',
      description:
        'Send a direct message in a DM conversation, or in a comment thread reply to a comment (reply_to) or comment on the object. Refused with conflict when the messaging window is closed, network_error when the network refuses.',
      id: conversation,
      input: sendMessageBody.extend({ idempotency_key: idempotencyKey }),
      output: messageView,
      async run({ caller, id, args }) {
        const { idempotency_key: key, ...body } = args;
        const idempotency = claim(caller, 'send_message', key, { id, body });
        return jsonText((await inbox.send(caller.scoped, id, body, 'mcp', idempotency)).messageJson);
      },
    }),
    defineTool({
      name: 'send_private_reply',
      title: 'Reply privately to a comment',
      description:
        'Send the one private reply (a direct message to its author) the network allows to a comment, within 7 days of it.',
      id: { arg: 'message_id', params: messageParams },
      input: privateReplyBody.extend({ idempotency_key: idempotencyKey }),
      output: messageView,
      async run({ caller, id, args }) {
        const { idempotency_key: key, ...body } = args;
        const idempotency = claim(caller, 'send_private_reply', key, { id, body });
        return jsonText((await inbox.privateReply(caller.scoped, id, body, 'mcp', idempotency)).messageJson);
      },
    }),
    defineTool({
      name: 'mark_conversation_read',
      title: 'Mark a conversation read',
      description: 'Mark a conversation read: its unread_count goes back to 0. Answers the conversation.',
      id: conversation,
      input: z.strictObject({}),
      output: conversationView,
      run: async ({ caller, id }) =>
        jsonText((await inbox.update(caller.scoped, id, { read: true })).conversationJson),
    }),
  ];
}
