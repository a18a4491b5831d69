import { z } from 'zod';
import { network, requestOrigin, timestamp } from './shared.ts';

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
    read_by_contact_at: timestamp
      .nullable()
      .describe(
        "DM threads: the person has seen the account's messages up to this time (the network's read receipt); null until one came",
      ),
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

/** A file, shared post, story mention or link in a message, as the network described it. */
const attachment = z.object({
  type: z
    .string()
    .describe(
      "the network's attachment type: image, video, audio, file, sticker, share, story_mention, ig_reel, reel, ig_post, post, fallback, unsupported_type, or another the network adds",
    ),
  url: z
    .string()
    .nullable()
    .describe('hosted by the network; null when the network sent none (an unsupported share, say)'),
  title: z.string().optional().describe('the title of a shared link or post, when the network sent one'),
  mime: z.string().optional(),
  width: z.number().int().optional(),
  height: z.number().int().optional(),
});

const reaction = z.object({
  from: z.string().describe("the network's id of the person who reacted"),
  reaction: z.string().describe("the network's name of the reaction: love, like, smile, wow, sad, angry..."),
  emoji: z.string().nullable(),
});

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
    attachments: z.array(attachment),
    parent: z
      .string()
      .nullable()
      .describe('the comment a reply answers, or the message a DM replies to, when it is stored'),
    story: z
      .object({ id: z.string().nullable(), url: z.string().nullable() })
      .nullable()
      .describe('Instagram DMs: the story this message replies to (its media URL expires with the story)'),
    unsupported: z
      .boolean()
      .describe(
        'the network does not show this kind of message through its API; the person sees it in the app',
      ),
    reactions: z.array(reaction).describe('one per person, as the network last reported it'),
    edited_at: timestamp.nullable().describe('when its author last edited it; `text` is the edited text'),
    deleted_at: timestamp
      .nullable()
      .describe(
        'when its author unsent it (DM) or it was removed (comment); its text and attachments are gone',
      ),
    hidden: z.boolean().describe('comments: hidden on the network (still readable by the account)'),
    source: z
      .enum([...requestOrigin.options, 'network'])
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
