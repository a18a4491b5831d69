import type { Network } from '@svc/contracts/public';
import { z } from 'zod';
import type { MessageRow } from './views.ts';

/**
 * What a Meta webhook body says about inboxes (facts §5.4–5.8), as a flat list of items: DMs and
 * their echoes (`messaging[]`), Instagram comments (`changes[comments]`) and Page comments
 * (`changes[feed]`, item comment, verb add). Anything else (reads, reactions, edits, permissions)
 * is not an inbox item and is left out. Each item names the account by the network's id
 * (`entry.id`); one body may hold many entries and items (Meta batches them).
 */
export type InboundItem = DmItem | CommentItem;

interface ItemBase {
  network: Network;
  /** The connected account's network id (`entry.id`). */
  accountPlatformId: string;
  /** The mid or comment id: what makes a second delivery the same message. */
  platformId: string;
  text: string | null;
  at: Date;
}

export interface DmItem extends ItemBase {
  type: 'dm';
  /** The other person's page- or app-scoped id. */
  contactId: string;
  /** Sent by the business (from any app, ours included). */
  echo: boolean;
  /** The app that sent an echo (ours when it went through our Send API call). */
  appId: string | null;
  attachments: MessageRow['attachments'];
}

export interface CommentItem extends ItemBase {
  type: 'comment';
  /** The commented media or post. */
  objectId: string;
  /** The top-level comment a reply answers; null for a top-level comment. */
  parentId: string | null;
  from: { id: string; name: string | null; handle: string | null };
  /** Written by the account itself (our own replies included). */
  self: boolean;
  permalink: string | null;
}

const id = z.coerce.string();
const messaging = z.looseObject({
  sender: z.looseObject({ id }),
  recipient: z.looseObject({ id }),
  timestamp: z.number(),
  message: z
    .looseObject({
      mid: z.string(),
      text: z.string().optional(),
      is_echo: z.boolean().optional(),
      is_deleted: z.boolean().optional(),
      app_id: z.coerce.string().optional(),
      attachments: z
        .array(
          z.looseObject({
            type: z.string(),
            payload: z.looseObject({ url: z.string().optional() }).optional(),
          }),
        )
        .optional(),
    })
    .optional(),
});
const change = z.looseObject({ field: z.string(), value: z.looseObject({}).optional() });
const body = z.looseObject({
  object: z.string(),
  entry: z.array(
    z.looseObject({
      id,
      time: z.number().optional(),
      messaging: z.array(z.unknown()).optional(),
      changes: z.array(z.unknown()).optional(),
    }),
  ),
});

const igComment = z.looseObject({
  id,
  text: z.string().optional(),
  parent_id: id.optional(),
  from: z.looseObject({ id, username: z.string().optional(), self_ig_scoped_id: id.optional() }),
  media: z.looseObject({ id }),
});
const pageComment = z.looseObject({
  item: z.literal('comment'),
  verb: z.literal('add'),
  comment_id: id,
  post_id: id,
  parent_id: id.optional(),
  from: z.looseObject({ id, name: z.string().optional() }).optional(),
  message: z.string().optional(),
  created_time: z.number().optional(),
  post: z.looseObject({ permalink_url: z.string().optional() }).optional(),
});

const NETWORK_OF: Record<string, Network> = { instagram: 'photo_network', page: 'page_network' };

export function inboxItems(payload: unknown): InboundItem[] {
  const parsed = body.safeParse(payload);
  const network = parsed.success ? NETWORK_OF[parsed.data.object] : undefined;
  if (!parsed.success || !network) return [];
  const items: InboundItem[] = [];
  for (const entry of parsed.data.entry) {
    const seconds = entry.time !== undefined && entry.time < 1e11 ? entry.time * 1000 : entry.time;
    const entryAt = new Date(seconds ?? Date.now());
    for (const raw of entry.messaging ?? []) {
      const item = dmItem(network, entry.id, raw);
      if (item) items.push(item);
    }
    for (const raw of entry.changes ?? []) {
      const item = commentItem(network, entry.id, raw, entryAt);
      if (item) items.push(item);
    }
  }
  return items;
}

function dmItem(network: Network, accountPlatformId: string, raw: unknown): DmItem | undefined {
  const parsed = messaging.safeParse(raw);
  const message = parsed.success ? parsed.data.message : undefined;
  if (!parsed.success || !message || message.is_deleted) return undefined;
  const echo = message.is_echo === true;
  return {
    type: 'dm',
    network,
    accountPlatformId,
    platformId: message.mid,
    contactId: echo ? parsed.data.recipient.id : parsed.data.sender.id,
    echo,
    appId: message.app_id ?? null,
    text: message.text ?? null,
    attachments: (message.attachments ?? []).flatMap((a) =>
      a.payload?.url ? [{ type: a.type, url: a.payload.url }] : [],
    ),
    at: new Date(parsed.data.timestamp),
  };
}

function commentItem(
  network: Network,
  accountPlatformId: string,
  raw: unknown,
  entryAt: Date,
): CommentItem | undefined {
  const parsed = change.safeParse(raw);
  if (!parsed.success) return undefined;
  const { field, value } = parsed.data;
  if (network === 'photo_network' && (field === 'comments' || field === 'live_comments')) {
    const c = igComment.safeParse(value);
    if (!c.success) return undefined;
    const from = c.data.from;
    return {
      type: 'comment',
      network,
      accountPlatformId,
      platformId: c.data.id,
      objectId: c.data.media.id,
      parentId: c.data.parent_id ?? null,
      from: { id: from.id, name: from.username ?? null, handle: from.username ?? null },
      self: from.id === accountPlatformId || from.self_ig_scoped_id !== undefined,
      permalink: null,
      text: c.data.text ?? null,
      at: entryAt,
    };
  }
  if (network === 'page_network' && field === 'feed') {
    const c = pageComment.safeParse(value);
    if (!c.success) return undefined;
    const from = c.data.from;
    const parent = c.data.parent_id && c.data.parent_id !== c.data.post_id ? c.data.parent_id : null;
    return {
      type: 'comment',
      network,
      accountPlatformId,
      platformId: c.data.comment_id,
      objectId: c.data.post_id,
      parentId: parent,
      from: { id: from?.id ?? '', name: from?.name ?? null, handle: null },
      self: from?.id === accountPlatformId,
      permalink: c.data.post?.permalink_url ?? null,
      text: c.data.message ?? null,
      at: c.data.created_time ? new Date(c.data.created_time * 1000) : entryAt,
    };
  }
  return undefined;
}
