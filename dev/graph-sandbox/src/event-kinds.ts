import { z } from '@svc/config';
import type { FastifyInstance, FastifyReply } from 'fastify';
import { ATTACHMENT_TYPES, inboundAttachment } from './attachments.ts';
import { ControlError, parseBody } from './control-errors.ts';
import {
  commentChangeValue,
  deliveryOf,
  editOf,
  feedBody,
  messagingBody,
  messagingItem,
  postReactionValue,
  reactionOf,
  readOf,
  statusValue,
  unsendOf,
} from './event-payloads.ts';
import type { AttachmentType, Conversation, Message, PagePost, Platform } from './store.ts';
import { addMessage, conversationFor, participantFor } from './threads.ts';
import type { World } from './world.ts';

/**
 * Control routes that make the sandbox send every other kind of messaging and feed webhook Meta
 * documents, so the product's handling of each is tested over HTTP: DMs of any attachment type
 * (with the payload as documented, `null`, or missing), replies to a message or a story,
 * unsupported messages; edits, unsends, reactions, read receipts and deliveries of a message;
 * postbacks, standby, handover and referrals; Page comments edited, removed, hidden or shown, a
 * reaction or a status on the Page; and any body at all, signed (`webhooks/raw`).
 */
type Json = Record<string, unknown>;

const personSchema = z
  .object({
    id: z.string().regex(/^\d+$/).optional(),
    username: z.string().min(1).optional(),
    name: z.string().min(1).optional(),
  })
  .default({});
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
    from: personSchema,
    text: z.string().min(1).optional(),
    attachments: z.array(kindAttachment).max(10).default([]),
    reply_to: replyTo.optional(),
    is_unsupported: z.literal(true).optional(),
  })
  .refine((b) => b.text !== undefined || b.attachments.length > 0 || b.is_unsupported, {
    message: 'give text, attachments or is_unsupported',
  });
const editBody = z.object({ text: z.string().min(1) });
const reactionBody = z.object({
  action: z.enum(['react', 'unreact']).default('react'),
  reaction: z.string().min(1).default('love'),
  emoji: z.string().min(1).default('\u2764\ufe0f'),
});
const HANDOVER = ['pass_thread_control', 'take_thread_control', 'request_thread_control'] as const;
const messagingEventBody = z.object({
  kind: z.enum(['postback', 'standby', 'referral', ...HANDOVER]),
  person_id: z.string().min(1),
  text: z.string().min(1).default('hello'),
  title: z.string().min(1).default('Get Started'),
  payload: z.string().min(1).default('GET_STARTED'),
});
const postReactionBody = z.object({ from: personSchema, reaction_type: z.string().min(1).default('like') });
const statusBody = z.object({ message: z.string().min(1) });
const rawBody = z.object({ body: z.record(z.string(), z.unknown()) });

/** Edits per message (`num_edit`), kept beside the store: a reset drops the messages and their counts. */
const edits = new WeakMap<Message, number>();

function need<T>(value: T | undefined, what: string): T {
  if (value === undefined) throw new ControlError(404, `${what} not found`);
  return value;
}

const created = (reply: FastifyReply, body: unknown) => reply.code(201).send(body);

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

function registerMessageRoutes(app: FastifyInstance, world: World): void {
  app.post<{ Params: { id: string } }>('/__sandbox/instagram/:id/message-kinds', async (req, reply) => {
    need(world.store.igAccounts.get(req.params.id), 'instagram account');
    return created(reply, await kindMessage(world, 'instagram', req.params.id, req.body));
  });
  app.post<{ Params: { id: string } }>('/__sandbox/pages/:id/message-kinds', async (req, reply) => {
    need(world.store.pages.get(req.params.id), 'page');
    return created(reply, await kindMessage(world, 'messenger', req.params.id, req.body));
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

/** Postbacks, standby, handover and referrals of a person of the account. */
async function messagingEvent(world: World, platform: Platform, accountId: string, input: unknown) {
  const body = parseBody(messagingEventBody, input);
  const person = world.store.participants.get(body.person_id);
  if (!person || person.accountId !== accountId) throw new ControlError(404, 'person not found');
  const appId = world.config.appId;
  const other = '263902037430900';
  const send = (key: string, value: unknown, list: 'messaging' | 'standby' = 'messaging') => {
    const item = messagingItem(world, person.id, accountId, key, value);
    return world.webhooks.sendEvent(messagingBody(world, platform, accountId, item, list));
  };
  switch (body.kind) {
    case 'postback':
      return send('postback', { mid: midFor(world, platform), title: body.title, payload: body.payload });
    case 'standby': {
      // A message all the same: the thread has it, only another app is told first.
      const message = addMessage(world, conversationFor(world, person), { text: body.text }, true);
      return send('message', { mid: message.id, text: body.text }, 'standby');
    }
    case 'referral':
      return send('referral', { ref: body.payload, source: 'SHORTLINK', type: 'OPEN_THREAD' });
    case 'pass_thread_control':
      return send(body.kind, { new_owner_app_id: other, previous_owner_app_id: appId, metadata: '' });
    case 'take_thread_control':
      return send(body.kind, { previous_owner_app_id: other, new_owner_app_id: appId, metadata: '' });
    case 'request_thread_control':
      return send(body.kind, { requested_owner_app_id: Number(other), metadata: '' });
  }
}

const midFor = (world: World, platform: Platform) =>
  platform === 'instagram' ? world.ids.igMessage() : world.ids.messengerMessage();

function registerMessagingEventRoutes(app: FastifyInstance, world: World): void {
  app.post<{ Params: { id: string } }>('/__sandbox/instagram/:id/messaging-events', async (req) => {
    need(world.store.igAccounts.get(req.params.id), 'instagram account');
    return { webhook: await messagingEvent(world, 'instagram', req.params.id, req.body) };
  });
  app.post<{ Params: { id: string } }>('/__sandbox/pages/:id/messaging-events', async (req) => {
    need(world.store.pages.get(req.params.id), 'page');
    return { webhook: await messagingEvent(world, 'messenger', req.params.id, req.body) };
  });
}

/** Page comments change (Instagram sends no webhook for these), and other Page feed items. */
function registerFeedRoutes(app: FastifyInstance, world: World): void {
  const pageComment = (id: string) => {
    const comment = need(world.store.comments.get(id), 'comment');
    if (comment.platform === 'instagram')
      throw new ControlError(400, 'Instagram sends no webhook when a comment is edited, removed or hidden');
    return comment;
  };
  const sendChange = (id: string, verb: string, change: (c: ReturnType<typeof pageComment>) => void) => {
    const comment = pageComment(id);
    change(comment);
    const value = commentChangeValue(world, comment, verb);
    return world.webhooks.sendEvent(feedBody(world, comment.accountId, value));
  };
  app.post<{ Params: { id: string } }>('/__sandbox/comments/:id/edit', async (req) => {
    const { text } = parseBody(editBody, req.body);
    return { webhook: await sendChange(req.params.id, 'edited', (c) => Object.assign(c, { text })) };
  });
  app.post<{ Params: { id: string } }>('/__sandbox/comments/:id/remove', async (req) => ({
    webhook: await sendChange(req.params.id, 'remove', (c) => world.store.comments.delete(c.id)),
  }));
  for (const verb of ['hide', 'unhide'] as const)
    app.post<{ Params: { id: string } }>(`/__sandbox/comments/:id/${verb}`, async (req) => ({
      webhook: await sendChange(req.params.id, verb, (c) => Object.assign(c, { hidden: verb === 'hide' })),
    }));
  app.post<{ Params: { id: string } }>('/__sandbox/pages/posts/:id/reactions', async (req) => {
    const post = need(world.store.pagePosts.get(req.params.id), 'page post');
    const body = parseBody(postReactionBody, req.body);
    const from = { id: body.from.id ?? world.ids.digits('77', 16), name: body.from.name ?? 'A Visitor' };
    const value = postReactionValue(world, post, from, body.reaction_type);
    return { webhook: await world.webhooks.sendEvent(feedBody(world, post.pageId, value)) };
  });
  app.post<{ Params: { id: string } }>('/__sandbox/pages/:id/status', async (req, reply) => {
    const page = need(world.store.pages.get(req.params.id), 'page');
    const { message } = parseBody(statusBody, req.body);
    const post: PagePost = {
      id: `${page.id}_${world.ids.pagePostPart()}`,
      pageId: page.id,
      message,
      link: null,
      photoIds: [],
      createdAt: world.clock.now(),
    };
    world.store.pagePosts.set(post.id, post);
    const value = statusValue(post, page.name);
    return created(reply, {
      id: post.id,
      webhook: await world.webhooks.sendEvent(feedBody(world, page.id, value)),
    });
  });
}

export function registerEventKinds(app: FastifyInstance, world: World): void {
  registerMessageRoutes(app, world);
  registerMessagingEventRoutes(app, world);
  registerFeedRoutes(app, world);
  // Any JSON body, encoded and signed as Meta does (for an account nobody connected, say).
  app.post('/__sandbox/webhooks/raw', async (req) => {
    const { body } = parseBody(rawBody, req.body);
    return { webhook: await world.webhooks.sendEvent(body) };
  });
}
