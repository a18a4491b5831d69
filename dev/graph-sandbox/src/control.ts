import { z } from '@svc/config';
import type { FastifyInstance, FastifyReply } from 'fastify';
import { ATTACHMENT_TYPES, inboundAttachment } from './attachments.ts';
import { personBody } from './control-bodies.ts';
import { ControlError, need, parseBody } from './control-errors.ts';
import { messagingEvent } from './events.ts';
import { registerFaultRoutes } from './faults.ts';
import { registerFeedChanges } from './feed-changes.ts';
import { addComment, checkParent } from './graph/comments.ts';
import { GraphFailure } from './graph-errors.ts';
import { registerMessageKinds } from './message-kinds.ts';
import { registerMessagingEvents } from './messaging-events.ts';
import { publishedLog } from './published.ts';
import { registerRunConfig } from './run-config.ts';
import type { Platform } from './store.ts';
import { addMessage, conversationFor, participantFor } from './threads.ts';
import { deauthorizeUser, invalidateUserTokens } from './tokens.ts';
import { isSendable } from './webhooks.ts';
import type { World } from './world.ts';

const userBody = z.object({
  name: z.string().min(1).optional(),
  pages: z
    .array(
      z.object({
        name: z.string().min(1).optional(),
        instagram: z.object({ username: z.string().min(1).optional() }).nullish(),
      }),
    )
    .default([]),
});
const attachmentSchema = z.object({
  type: z.enum(ATTACHMENT_TYPES),
  url: z.url({ protocol: /^https?$/ }),
  mime_type: z.string().min(1).optional(),
  name: z.string().min(1).optional(),
  width: z.number().int().positive().optional(),
  height: z.number().int().positive().optional(),
});
const textOrFiles = { message: 'give text, attachments or both' };
const dmBody = z
  .object({
    from: personBody,
    text: z.string().min(1).optional(),
    attachments: z.array(attachmentSchema).max(10).default([]),
  })
  .refine((b) => b.text !== undefined || b.attachments.length > 0, textOrFiles);
const appMessageBody = z
  .object({
    to: z.object({ id: z.string().min(1) }),
    text: z.string().min(1).optional(),
    attachments: z.array(attachmentSchema).max(10).default([]),
  })
  .refine((b) => b.text !== undefined || b.attachments.length > 0, textOrFiles);
const commentBody = z.object({
  from: personBody,
  text: z.string().min(1),
  parent_id: z.string().min(1).optional(),
});
const replayBody = z.object({ times: z.number().int().min(1).max(1000).default(1) });
const rawBody = z.object({ body: z.record(z.string(), z.unknown()) });

async function inboundDm(world: World, platform: Platform, accountId: string, body: unknown) {
  const { from, text, attachments } = parseBody(dmBody, body);
  const participant = participantFor(world, platform, accountId, from);
  const conversation = conversationFor(world, participant);
  const content = { text: text ?? null, attachments: attachments.map((a) => inboundAttachment(world, a)) };
  const message = addMessage(world, conversation, content, true);
  const webhook = await world.webhooks.sendEvent(messagingEvent(world, platform, accountId, message));
  return { conversation_id: conversation.id, message_id: message.id, sender_id: participant.id, webhook };
}

/**
 * The business answers from Instagram's or Facebook's own app: stored as outbound and echoed like
 * a Send API message, but without an `app_id` (it is not our app that sent it).
 */
async function appMessage(world: World, platform: Platform, accountId: string, body: unknown) {
  const { to, text, attachments } = parseBody(appMessageBody, body);
  const participant = world.store.participants.get(to.id);
  if (!participant || participant.accountId !== accountId) throw new ControlError(404, 'person not found');
  const conversation = conversationFor(world, participant);
  const content = {
    text: text ?? null,
    attachments: attachments.map((a) => inboundAttachment(world, a)),
    appId: null,
  };
  const message = addMessage(world, conversation, content, false);
  const webhook = await world.webhooks.sendEvent(messagingEvent(world, platform, accountId, message));
  return { conversation_id: conversation.id, message_id: message.id, webhook };
}

async function inboundComment(
  world: World,
  platform: Platform,
  objectId: string,
  accountId: string,
  body: unknown,
) {
  const { from, text, parent_id: parentId = null } = parseBody(commentBody, body);
  try {
    checkParent(world, objectId, parentId);
  } catch (error) {
    if (error instanceof GraphFailure)
      throw new ControlError(400, 'parent_id must be a visible top-level comment of this object');
    throw error;
  }
  const fromId =
    from.id ?? (platform === 'instagram' ? world.ids.digits('59', 16) : world.ids.digits('77', 16));
  const fromName = from.username ?? from.name ?? `user_${fromId.slice(-6)}`;
  const { comment, webhook } = await addComment(world, {
    platform,
    accountId,
    objectId,
    parentId,
    fromId,
    fromName,
    text,
  });
  return { id: comment.id, from: { id: fromId, name: fromName }, webhook };
}

export function registerControl(app: FastifyInstance, world: World): void {
  const s = () => world.store;
  const created = (reply: FastifyReply, body: unknown) => reply.code(201).send(body);

  app.post('/__sandbox/users', (req, reply) => {
    const { user, pages } = world.createUser(parseBody(userBody, req.body));
    const instagram = (igId: string | null) => {
      const account = igId ? s().igAccounts.get(igId) : undefined;
      return account ? { id: account.id, username: account.username } : null;
    };
    return created(reply, {
      user: { id: user.id, name: user.name },
      pages: pages.map((p) => ({ id: p.id, name: p.name, instagram: instagram(p.igId) })),
    });
  });
  app.get('/__sandbox/users', () => ({ data: [...s().users.values()] }));

  app.post<{ Params: { id: string } }>('/__sandbox/instagram/:id/messages', async (req, reply) => {
    need(s().igAccounts.get(req.params.id), 'instagram account');
    return created(reply, await inboundDm(world, 'instagram', req.params.id, req.body));
  });
  app.post<{ Params: { id: string } }>('/__sandbox/pages/:id/messages', async (req, reply) => {
    need(s().pages.get(req.params.id), 'page');
    return created(reply, await inboundDm(world, 'messenger', req.params.id, req.body));
  });
  app.post<{ Params: { id: string } }>('/__sandbox/instagram/:id/app-messages', async (req, reply) => {
    need(s().igAccounts.get(req.params.id), 'instagram account');
    return created(reply, await appMessage(world, 'instagram', req.params.id, req.body));
  });
  app.post<{ Params: { id: string } }>('/__sandbox/pages/:id/app-messages', async (req, reply) => {
    need(s().pages.get(req.params.id), 'page');
    return created(reply, await appMessage(world, 'messenger', req.params.id, req.body));
  });
  app.post<{ Params: { id: string } }>('/__sandbox/instagram/media/:id/comments', async (req, reply) => {
    const media = need(s().igMedia.get(req.params.id), 'instagram media');
    return created(reply, await inboundComment(world, 'instagram', media.id, media.igId, req.body));
  });
  app.post<{ Params: { id: string } }>('/__sandbox/pages/posts/:id/comments', async (req, reply) => {
    const post = need(s().pagePosts.get(req.params.id), 'page post');
    return created(reply, await inboundComment(world, 'messenger', post.id, post.pageId, req.body));
  });

  app.post<{ Params: { id: string } }>('/__sandbox/users/:id/deauthorize', async (req) => {
    need(s().users.get(req.params.id), 'user');
    return { deauthorize: await deauthorizeUser(world, req.params.id) };
  });
  app.post<{ Params: { id: string } }>('/__sandbox/users/:id/expire-tokens', (req) => {
    need(s().users.get(req.params.id), 'user');
    invalidateUserTokens(world, req.params.id, 463);
    return { expired: true };
  });

  registerFaultRoutes(app, world);
  registerRunConfig(app, () => world.store);
  registerMessageKinds(app, world);
  registerMessagingEvents(app, world);
  registerFeedChanges(app, world);

  app.get('/__sandbox/published', () => ({ data: publishedLog(world) }));
  app.get('/__sandbox/sent', () => ({ data: s().sent }));
  app.get('/__sandbox/webhooks', () => ({ data: s().webhookAttempts }));
  // Any JSON body, encoded and signed as Meta does (for an account nobody connected, say).
  app.post('/__sandbox/webhooks/raw', async (req) => {
    const { body } = parseBody(rawBody, req.body);
    return { webhook: await world.webhooks.sendEvent(body) };
  });
  app.post<{ Params: { id: string } }>('/__sandbox/webhooks/:id/replay', async (req) => {
    const { times } = parseBody(replayBody, req.body);
    const delivery = need(s().deliveries.get(req.params.id), 'delivery');
    if (!isSendable(delivery)) throw new ControlError(400, 'a verification handshake cannot be replayed');
    const results = await world.webhooks.replay(delivery, times);
    return { replayed: results.length, results };
  });
  app.post('/__sandbox/webhooks/verify', (req) => {
    const body = parseBody(
      z.object({ url: z.url().optional(), verify_token: z.string().optional() }),
      req.body,
    );
    const url = body.url ?? world.config.webhookUrl;
    if (!url) throw new ControlError(400, 'no url given and SANDBOX_WEBHOOK_URL is not set');
    return world.webhooks.verify(url, body.verify_token ?? world.config.verifyToken);
  });
  app.post('/__sandbox/clock', (req) => {
    const { advance_seconds: seconds } = parseBody(
      z.object({ advance_seconds: z.number().nonnegative() }),
      req.body,
    );
    world.clock.advance(seconds * 1000);
    return { now: new Date(world.clock.now()).toISOString() };
  });
  app.post('/__sandbox/reset', () => {
    world.reset();
    return { reset: true };
  });
}
