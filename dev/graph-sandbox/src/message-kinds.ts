import { z } from '@svc/config';
import type { FastifyInstance } from 'fastify';
import { ATTACHMENT_TYPES, inboundAttachment } from './attachments.ts';
import { editBody, personBody } from './control-bodies.ts';
import { ControlError, need, parseBody } from './control-errors.ts';
import {
  deliveryOf,
  editOf,
  messagingBody,
  messagingItem,
  reactionOf,
  readOf,
  unsendOf,
} from './event-payloads.ts';
import type { AttachmentType, Conversation, Message, Platform } from './store.ts';
import { addMessage, conversationFor, participantFor } from './threads.ts';
import type { World } from './world.ts';

/**
 * Control routes that make a person's messages of every kind Meta documents, so the product's
 * handling of each is tested over HTTP: DMs of any attachment type (with the payload as
 * documented, `null`, or missing), replies to a message or a story, unsupported messages; and
 * the edits, unsends, reactions, read receipts and deliveries of a message.
 */
type Json = Record<string, unknown>;

const httpUrl = z.url({ protocol: /^https?$/ });
const kindAttachment = z.object({
  type: z.string().min(1).max(40),
  url: httpUrl.optional(),
  title: z.string().min(1).optional(),
  /** `object`: `{url, title}` as documented; `null`: `"payload": null` with `title`/`URL` beside it; `omitted`: no payload. */
  payload: z.enum(['object', 'null', 'omitted']).default('object'),
});
const replyTo = z.union([
  z.object({ mid: z.string().min(1) }),
  z.object({ story: z.object({ id: z.string().regex(/^\d+$/).optional(), url: httpUrl }) }),
]);
const kindMessageBody = z
  .object({
    from: personBody,
    text: z.string().min(1).optional(),
    attachments: z.array(kindAttachment).max(10).default([]),
    reply_to: replyTo.optional(),
    is_unsupported: z.literal(true).optional(),
  })
  .refine((b) => b.text !== undefined || b.attachments.length > 0 || b.is_unsupported, {
    message: 'give text, attachments or is_unsupported',
  });
const reactionBody = z.object({
  action: z.enum(['react', 'unreact']).default('react'),
  reaction: z.string().min(1).default('love'),
  emoji: z.string().min(1).default('\u2764\ufe0f'),
});

/** Edits per message (`num_edit`), kept beside the store: a reset drops the messages and their counts. */
const edits = new WeakMap<Message, number>();

/** The documented webhook forms of an attachment (see `kindAttachment.payload`). */
function webhookAttachment(a: z.infer<typeof kindAttachment>): Json {
  const known: Json = {};
  if (a.url !== undefined) known.url = a.url;
  if (a.title !== undefined) known.title = a.title;
  if (a.payload === 'omitted') return { type: a.type };
  if (a.payload === 'null') return { type: a.type, payload: null, title: a.title, URL: a.url };
  return { type: a.type, payload: known };
}

/** A person's message of any documented shape: stored (text, and files Graph can show) and sent. */
async function kindMessage(world: World, platform: Platform, accountId: string, input: unknown) {
  const body = parseBody(kindMessageBody, input);
  const person = participantFor(world, platform, accountId, body.from);
  const conversation = conversationFor(world, person);
  const files = body.attachments.flatMap((a) =>
    (ATTACHMENT_TYPES as readonly string[]).includes(a.type) && a.url
      ? [inboundAttachment(world, { type: a.type as AttachmentType, url: a.url })]
      : [],
  );
  const message = addMessage(world, conversation, { text: body.text ?? null, attachments: files }, true);
  const content: Json = { mid: message.id };
  if (body.text !== undefined) content.text = body.text;
  if (body.attachments.length > 0) content.attachments = body.attachments.map(webhookAttachment);
  if (body.reply_to && 'mid' in body.reply_to) content.reply_to = { mid: body.reply_to.mid };
  if (body.reply_to && 'story' in body.reply_to) {
    const { id, url } = body.reply_to.story;
    content.reply_to = { story: { url, id: id ?? world.ids.digits('1790', 17) } };
  }
  if (body.is_unsupported) content.is_unsupported = true;
  const item = messagingItem(world, person.id, accountId, 'message', content);
  const webhook = await world.webhooks.sendEvent(messagingBody(world, platform, accountId, item));
  return { conversation_id: conversation.id, message_id: message.id, sender_id: person.id, webhook };
}

interface Thread {
  message: Message;
  conversation: Conversation;
}

function threadOf(world: World, mid: string): Thread {
  const message = need(world.store.messages.get(mid), 'message');
  const conversation = need(world.store.conversations.get(message.conversationId), 'conversation');
  return { message, conversation };
}

/** Only the person's own messages: they edit and unsend theirs, not the business's. */
function personsOwn(thread: Thread): void {
  if (!thread.message.inbound) throw new ControlError(400, "only the person's own messages can be changed");
}

/** Sends one messaging item of the thread, from the person to the account. */
function sendFromPerson({ conversation }: Thread, world: World, key: string, value: unknown) {
  const item = messagingItem(world, conversation.participantId, conversation.accountId, key, value);
  return world.webhooks.sendEvent(messagingBody(world, conversation.platform, conversation.accountId, item));
}

export function registerMessageKinds(app: FastifyInstance, world: World): void {
  app.post<{ Params: { id: string } }>('/__sandbox/instagram/:id/message-kinds', async (req, reply) => {
    need(world.store.igAccounts.get(req.params.id), 'instagram account');
    return reply.code(201).send(await kindMessage(world, 'instagram', req.params.id, req.body));
  });
  app.post<{ Params: { id: string } }>('/__sandbox/pages/:id/message-kinds', async (req, reply) => {
    need(world.store.pages.get(req.params.id), 'page');
    return reply.code(201).send(await kindMessage(world, 'messenger', req.params.id, req.body));
  });
  app.post<{ Params: { mid: string } }>('/__sandbox/messages/:mid/edit', async (req) => {
    const thread = threadOf(world, req.params.mid);
    personsOwn(thread);
    const { text } = parseBody(editBody, req.body);
    const count = (edits.get(thread.message) ?? 0) + 1;
    edits.set(thread.message, count);
    thread.message.text = text;
    return {
      webhook: await sendFromPerson(thread, world, 'message_edit', editOf(thread.message, text, count)),
    };
  });
  app.post<{ Params: { mid: string } }>('/__sandbox/messages/:mid/unsend', async (req) => {
    const thread = threadOf(world, req.params.mid);
    personsOwn(thread);
    // Gone for Graph too: an unsent message is no longer listed or readable.
    world.store.messages.delete(thread.message.id);
    thread.conversation.messageIds = thread.conversation.messageIds.filter((id) => id !== thread.message.id);
    return { webhook: await sendFromPerson(thread, world, 'message', unsendOf(thread.message)) };
  });
  app.post<{ Params: { mid: string } }>('/__sandbox/messages/:mid/reactions', async (req) => {
    const thread = threadOf(world, req.params.mid);
    const body = parseBody(reactionBody, req.body);
    const reaction = { action: body.action, name: body.reaction, emoji: body.emoji };
    return { webhook: await sendFromPerson(thread, world, 'reaction', reactionOf(thread.message, reaction)) };
  });
  app.post<{ Params: { mid: string } }>('/__sandbox/messages/:mid/read', async (req) => {
    const thread = threadOf(world, req.params.mid);
    const read = readOf(world, thread.conversation.platform, thread.message);
    return { webhook: await sendFromPerson(thread, world, 'read', read) };
  });
  app.post<{ Params: { mid: string } }>('/__sandbox/messages/:mid/delivery', async (req) => {
    const thread = threadOf(world, req.params.mid);
    if (thread.conversation.platform === 'instagram')
      throw new ControlError(
        400,
        'Instagram sends no delivery webhooks (message_deliveries is Messenger only)',
      );
    return { webhook: await sendFromPerson(thread, world, 'delivery', deliveryOf(world, thread.message)) };
  });
}
