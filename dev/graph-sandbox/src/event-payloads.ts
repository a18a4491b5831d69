import { graphTime, unixSeconds } from './clock.ts';
import type { Comment, Message, PagePost, Platform } from './store.ts';
import type { World } from './world.ts';

/**
 * The webhook bodies of the messaging and feed events besides new DMs and comments (events.ts):
 * shapes as Meta documents them (facts §5.5, §5.7, §5.8; Messenger Platform webhook event reference:
 * messages, message_edits, message_reactions, message_reads, message_deliveries,
 * messaging_postbacks, standby, messaging_handovers; Instagram webhook examples; Page `feed`).
 */
type Json = Record<string, unknown>;

/** One messaging item in Meta's envelope; `standby` puts it where a thread's secondary app gets it. */
export function messagingBody(
  world: World,
  platform: Platform,
  accountId: string,
  item: Json,
  list: 'messaging' | 'standby' = 'messaging',
) {
  const entry = { id: accountId, time: world.clock.now(), [list]: [item] };
  return { object: platform === 'instagram' ? 'instagram' : 'page', entry: [entry] };
}

/** A messaging item from `from` to `to` at the sandbox clock, carrying `key: value`. */
export function messagingItem(world: World, from: string, to: string, key: string, value: unknown): Json {
  return { sender: { id: from }, recipient: { id: to }, timestamp: world.clock.now(), [key]: value };
}

/** `message_edit` (Messenger `message_edits`; Instagram sends the same item). */
export const editOf = (message: Message, text: string, edits: number) => ({
  mid: message.id,
  text,
  num_edit: edits,
});

/** An unsent message: Meta sends the mid again with `is_deleted` and nothing else. */
export const unsendOf = (message: Message) => ({ mid: message.id, is_deleted: true });

/** `reaction`: react with a name and emoji, or unreact (no reaction, no emoji). */
export function reactionOf(message: Message, reaction: { action: string; name: string; emoji: string }) {
  if (reaction.action === 'unreact') return { mid: message.id, action: 'unreact' };
  return { mid: message.id, action: 'react', reaction: reaction.name, emoji: reaction.emoji };
}

/** A read receipt: Instagram names the message (`messaging_seen`), Messenger a watermark (`message_reads`). */
export function readOf(world: World, platform: Platform, message: Message) {
  return platform === 'instagram' ? { mid: message.id } : { watermark: world.clock.now() };
}

/** `delivery` (Messenger `message_deliveries` only). */
export const deliveryOf = (world: World, message: Message) => ({
  mids: [message.id],
  watermark: world.clock.now(),
});

/** A Page `feed` change (object `page`, time in seconds). */
export function feedBody(world: World, pageId: string, value: Json) {
  const time = unixSeconds(world.clock.now());
  return { object: 'page', entry: [{ id: pageId, time, changes: [{ field: 'feed', value }] }] };
}

/** A Page comment's `feed` value for a verb other than `add` (edited, remove, hide, unhide). */
export function commentChangeValue(world: World, comment: Comment, verb: string): Json {
  const value: Json = {
    from: { id: comment.fromId, name: comment.fromName },
    post_id: comment.objectId,
    comment_id: comment.id,
    parent_id: comment.parentId ?? comment.objectId,
    created_time: unixSeconds(comment.createdAt),
    item: 'comment',
    verb,
  };
  // An edit carries the new text; a removed or hidden comment only names itself.
  if (verb === 'edited') value.message = comment.text;
  if (verb === 'edited') value.post = postOf(world, comment);
  return value;
}

/** The post a Page comment is on, as Meta's `feed` change describes it. */
export function postOf(world: World, comment: Comment): Json {
  const post = world.store.pagePosts.get(comment.objectId);
  const postPart = comment.objectId.split('_')[1] ?? comment.objectId;
  return {
    id: comment.objectId,
    status_type: post?.photoIds.length ? 'added_photos' : 'mobile_status_update',
    is_published: true,
    updated_time: graphTime(post?.createdAt ?? comment.createdAt),
    promotion_status: 'inactive',
    permalink_url: `${world.config.publicUrl}/${comment.accountId}/posts/${postPart}`,
  };
}

/** Someone reacted to a Page post (`item: reaction`). */
export function postReactionValue(
  world: World,
  post: PagePost,
  from: { id: string; name: string },
  type: string,
) {
  return {
    from,
    post_id: post.id,
    created_time: unixSeconds(world.clock.now()),
    item: 'reaction',
    parent_id: post.id,
    reaction_type: type,
    verb: 'add',
  };
}

/** The Page posted a status (`item: status`), as the Page feed reference's sample shows it. */
export function statusValue(post: PagePost, pageName: string) {
  return {
    item: 'status',
    post_id: post.id,
    verb: 'add',
    published: 1,
    created_time: unixSeconds(post.createdAt),
    message: post.message,
    from: { name: pageName, id: post.pageId },
  };
}
