import { z } from 'zod';
import type { MessageChange } from './message-changes.ts';
import type { Located, Reading } from './meta-items.ts';
import { messagingItem } from './meta-messaging.ts';
import { isRecord, issuesOf, metaTime, text, unreadable } from './meta-reading.ts';

/**
 * One `changes[]` item (facts §5.6, §5.8): an Instagram comment (`comments`, `live_comments`), or a
 * Page `feed` change. Of the feed, only comments are ours: `add` is a new comment, `edited`,
 * `remove`, `hide` and `unhide` change a stored one; a status, photo, share or reaction on the Page
 * is not an inbox item (null), and neither is any other field (`mentions`, insights...).
 */
const id = z.coerce.string().min(1);
const change = z.looseObject({ field: z.string(), value: z.unknown().optional() });

const igComment = z.looseObject({
  id,
  text: z.string().optional(),
  parent_id: id.optional(),
  from: z.looseObject({ id, username: z.string().optional(), self_ig_scoped_id: id.optional() }),
  media: z.looseObject({ id }),
});
const feedItem = z.looseObject({ item: z.string(), verb: z.string().optional() });
const pageComment = z.looseObject({
  comment_id: id,
  post_id: id,
  parent_id: id.optional(),
  from: z.looseObject({ id, name: z.string().optional() }).optional(),
  message: z.string().optional(),
  created_time: z.number().optional(),
  post: z.looseObject({ permalink_url: z.string().optional() }).optional(),
});
const changedComment = z.looseObject({ comment_id: id, message: z.string().optional() });

export function feedChange(place: Located, raw: unknown): Reading {
  const parsed = change.safeParse(raw);
  if (!parsed.success) return unreadable(issuesOf(parsed.error));
  const { field, value } = parsed.data;
  if (place.network === 'photo_network' && (field === 'comments' || field === 'live_comments'))
    return instagramComment(place, value);
  if (place.network === 'page_network' && field === 'feed') return feed(place, value);
  // The App Dashboard's "Test" sends an Instagram DM in this form (facts §5.3).
  if (field === 'messages' && isRecord(value)) return messagingItem(place, value);
  return null;
}

function instagramComment(place: Located, value: unknown): Reading {
  const c = igComment.safeParse(value);
  if (!c.success) return unreadable(`${issuesOf(c.error)} (comments)`);
  const from = c.data.from;
  return {
    type: 'comment',
    ...place,
    platformId: c.data.id,
    objectId: c.data.media.id,
    parentId: c.data.parent_id ?? null,
    from: { id: from.id, name: from.username ?? null, handle: from.username ?? null },
    self: from.id === place.accountPlatformId || from.self_ig_scoped_id !== undefined,
    permalink: null,
    text: c.data.text ?? null,
  };
}

function feed(place: Located, value: unknown): Reading {
  const item = feedItem.safeParse(value);
  if (!item.success) return unreadable(`${issuesOf(item.error)} (feed)`);
  if (item.data.item !== 'comment') return null;
  const verb = item.data.verb;
  if (verb === 'add') return pageCommentAdded(place, value);
  const change = commentChangeOf(verb, place.at);
  if (!change) return null;
  const c = changedComment.safeParse(value);
  if (!c.success) return unreadable(`${issuesOf(c.error)} (feed comment ${verb})`);
  const changed = change.kind === 'edit' ? { ...change, text: c.data.message ?? null } : change;
  return { type: 'change', ...place, platformId: c.data.comment_id, change: changed };
}

/** What a feed verb does to a stored comment; null for verbs that change nothing we keep. */
function commentChangeOf(verb: string | undefined, at: Date): MessageChange | null {
  if (verb === 'edited') return { kind: 'edit', text: null, at };
  if (verb === 'remove') return { kind: 'delete', at };
  if (verb === 'hide' || verb === 'unhide') return { kind: 'hide', hidden: verb === 'hide' };
  return null;
}

function pageCommentAdded(place: Located, value: unknown): Reading {
  const c = pageComment.safeParse(value);
  if (!c.success) return unreadable(`${issuesOf(c.error)} (feed comment add)`);
  const from = c.data.from;
  const parent = c.data.parent_id && c.data.parent_id !== c.data.post_id ? c.data.parent_id : null;
  return {
    type: 'comment',
    ...place,
    platformId: c.data.comment_id,
    objectId: c.data.post_id,
    parentId: parent,
    from: { id: from?.id ?? '', name: from?.name ?? null, handle: null },
    self: from?.id === place.accountPlatformId,
    permalink: text(c.data.post?.permalink_url) ?? null,
    text: c.data.message ?? null,
    at: c.data.created_time ? metaTime(c.data.created_time) : place.at,
  };
}
