import { webhookAttachment } from './attachments.ts';
import { unixSeconds } from './clock.ts';
import { postOf } from './event-payloads.ts';
import { productTypeOf } from './graph/instagram-media.ts';
import type { Comment, Message, Platform } from './store.ts';
import type { World } from './world.ts';

/**
 * Webhook payloads in Meta's envelopes (facts §5.4–5.8). Messaging entries carry `time` in ms,
 * `changes` entries in seconds, as observed in real payloads. Every time is the sandbox clock's.
 */
export function messagingEvent(world: World, platform: Platform, accountId: string, message: Message) {
  const body: Record<string, unknown> = { mid: message.id };
  if (message.text !== null) body.text = message.text;
  if (message.attachments.length) body.attachments = message.attachments.map(webhookAttachment);
  // An echo (sender = the business): `app_id` names the app that sent it, absent for Meta's own apps (§5.7).
  if (!message.inbound) body.is_echo = true;
  if (message.appId !== null) body.app_id = Number(message.appId);
  return {
    object: platform === 'instagram' ? 'instagram' : 'page',
    entry: [
      {
        id: accountId,
        time: world.clock.now(),
        messaging: [
          {
            sender: { id: message.fromId },
            recipient: { id: message.toId },
            timestamp: message.createdAt,
            message: body,
          },
        ],
      },
    ],
  };
}

export function commentEvent(world: World, comment: Comment) {
  const time = unixSeconds(world.clock.now());
  if (comment.platform === 'instagram') {
    const fromAccount = comment.fromId === comment.accountId;
    const from: Record<string, string> = { id: comment.fromId, username: comment.fromName };
    if (fromAccount) from.self_ig_scoped_id = comment.fromId;
    const value: Record<string, unknown> = {
      id: comment.id,
      text: comment.text,
      from,
      media: { id: comment.objectId, media_product_type: productTypeOf(world, comment.objectId) },
    };
    if (comment.parentId) value.parent_id = comment.parentId;
    return {
      object: 'instagram',
      entry: [{ id: comment.accountId, time, changes: [{ field: 'comments', value }] }],
    };
  }
  const value = {
    item: 'comment',
    verb: 'add',
    comment_id: comment.id,
    post_id: comment.objectId,
    parent_id: comment.parentId ?? comment.objectId,
    from: { id: comment.fromId, name: comment.fromName },
    message: comment.text,
    created_time: unixSeconds(comment.createdAt),
    post: postOf(world, comment),
  };
  return { object: 'page', entry: [{ id: comment.accountId, time, changes: [{ field: 'feed', value }] }] };
}
