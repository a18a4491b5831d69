import { z } from 'zod';
import { network, timestamp } from './shared.ts';

/**
 * A conversation as partners see it, defined once: inbox builds it, the gateway answers it as it
 * is, and inbox events carry it as `data.conversation`. Either a DM thread with one person or the
 * comment thread of one published object.
 */
export const conversationView = z
  .object({
    id: z.string(),
    workspace: z.string(),
    account: z.string(),
    network,
    kind: z.enum(['dm', 'comments']),
    contact: z
      .object({
        id: z.string().describe("the person's id on the network (page- or app-scoped)"),
        name: z.string().nullable(),
        handle: z.string().nullable(),
        avatar_url: z.string().nullable(),
      })
      .nullable()
      .describe('the other person of a DM thread; null for comment threads'),
    object: z
      .object({
        id: z.string().describe("the network's id of the commented media or post"),
        permalink: z.string().nullable(),
        caption: z.string().nullable(),
        post: z.string().nullable().describe('our post id when it was published through us'),
      })
      .nullable()
      .describe('the commented object; null for DM threads'),
    last_message_at: timestamp.nullable(),
    unread_count: z.number().int(),
    archived: z.boolean(),
    reply_window: z
      .object({
        open: z.boolean().describe('a message without tag can be sent now'),
        closes_at: timestamp.nullable().describe("24 hours after the person's last message"),
        human_agent_until: timestamp
          .nullable()
          .describe('until when a reply with tag human_agent can be sent (7 days)'),
      })
      .nullable()
      .describe('DM threads only: whether and until when a message can be sent'),
    created: timestamp,
    updated: timestamp,
  })
  .meta({ id: 'Conversation' });

export type ConversationView = z.infer<typeof conversationView>;

const person = z.object({ id: z.string(), name: z.string().nullable(), handle: z.string().nullable() });

/** A message, comment or reply as partners see it; inbox events carry it as `data.message`. */
export const messageView = z
  .object({
    id: z.string(),
    conversation: z.string(),
    workspace: z.string(),
    direction: z.enum(['inbound', 'outbound']),
    kind: z.enum(['message', 'comment', 'reply', 'private_reply']),
    platform_message_id: z.string().nullable(),
    from: person.nullable(),
    text: z.string().nullable(),
    attachments: z.array(
      z.object({
        type: z.string(),
        url: z.string().describe('hosted by the network'),
        mime: z.string().optional(),
        width: z.number().int().optional(),
        height: z.number().int().optional(),
      }),
    ),
    parent: z.string().nullable().describe('the comment a reply answers'),
    source: z
      .enum(['api', 'widget', 'mcp', 'network'])
      .nullable()
      .describe("outbound only: where it was sent from; network = the network's own app"),
    private_reply: z
      .object({
        state: z.enum(['available', 'sent', 'expired', 'not_allowed']),
        available_until: timestamp.nullable(),
        message: z.string().nullable().describe('the private reply sent, if any'),
      })
      .nullable()
      .describe('inbound comments only: whether a private reply can be sent now'),
    created_at: timestamp.describe("the network's time"),
    created: timestamp,
  })
  .meta({ id: 'Message' });

export type MessageView = z.infer<typeof messageView>;
