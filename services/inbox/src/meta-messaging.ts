import { z } from 'zod';
import type { MessageRow } from './inbox-rows.ts';
import type { Located, Reading } from './meta-items.ts';
import {
  isRecord,
  issuesOf,
  type Json,
  metaTime,
  recordOf,
  text,
  unreadable,
  webUrl,
} from './meta-reading.ts';

/**
 * One `messaging[]` item of a Messenger or Instagram webhook (facts §5.5, §5.7): a message (or its
 * unsend, `is_deleted`), an edit (`message_edit`), a reaction, or a read receipt. Every other kind
 * (`delivery`, `postback`, `referral`, `optin`, handover's `pass_thread_control` and friends) is not
 * ours: null. What a message carries is read leniently: an attachment without a payload, with
 * `"payload": null` or of a type we do not know keeps the message and records what is known.
 */
const KINDS = ['message', 'message_edit', 'reaction', 'read'] as const;
type Kind = (typeof KINDS)[number];

const id = z.coerce.string().min(1);
const envelope = z.looseObject({
  sender: z.looseObject({ id }),
  recipient: z.looseObject({ id }),
  timestamp: z.number().optional(),
});

interface Parties {
  place: Located;
  sender: string;
  recipient: string;
}

export function messagingItem(place: Located, raw: unknown): Reading {
  if (!isRecord(raw)) return unreadable('not an object');
  const kind = KINDS.find((k) => k in raw);
  if (!kind) return null;
  const parsed = envelope.safeParse(raw);
  if (!parsed.success) return unreadable(issuesOf(parsed.error));
  const at = parsed.data.timestamp === undefined ? place.at : metaTime(parsed.data.timestamp);
  const parties = {
    place: { ...place, at },
    sender: parsed.data.sender.id,
    recipient: parsed.data.recipient.id,
  };
  const content = raw[kind];
  if (!isRecord(content)) return unreadable(`${kind} is not an object`);
  return READERS[kind](parties, content);
}

const READERS: Record<Kind, (parties: Parties, content: Json) => Reading> = {
  message: messageOf,
  message_edit: (parties, edit) => {
    const mid = text(edit.mid);
    if (!mid) return unreadable('message_edit.mid is missing');
    const change = { kind: 'edit' as const, text: text(edit.text) ?? null, at: parties.place.at };
    return { type: 'change', ...parties.place, platformId: mid, change };
  },
  reaction: ({ place, sender }, reaction) => {
    const mid = text(reaction.mid);
    if (!mid) return unreadable('reaction.mid is missing');
    const now =
      reaction.action === 'unreact'
        ? null
        : { reaction: text(reaction.reaction) ?? 'other', emoji: text(reaction.emoji) ?? null };
    return {
      type: 'change',
      ...place,
      platformId: mid,
      change: { kind: 'reaction', from: sender, reaction: now },
    };
  },
  read: ({ place, sender }, read) => {
    const mid = text(read.mid) ?? null;
    const upTo = typeof read.watermark === 'number' ? metaTime(read.watermark) : null;
    if (mid === null && upTo === null) return unreadable('read has neither mid nor watermark');
    return { type: 'read', ...place, contactId: sender, mid, upTo };
  },
};

/** A message, an echo of the business's, or the unsend of one (`is_deleted`). */
function messageOf({ place, sender, recipient }: Parties, message: Json): Reading {
  const mid = text(message.mid);
  if (!mid) return unreadable('message.mid is missing');
  if (message.is_deleted === true)
    return { type: 'change', ...place, platformId: mid, change: { kind: 'delete', at: place.at } };
  const echo = message.is_echo === true;
  const replyTo = recordOf(message.reply_to);
  return {
    type: 'dm',
    ...place,
    platformId: mid,
    contactId: echo ? recipient : sender,
    echo,
    appId: text(message.app_id) ?? null,
    text: typeof message.text === 'string' ? message.text : null,
    attachments: attachmentsOf(message.attachments),
    parentPlatformId: text(replyTo.mid) ?? null,
    story: storyOf(replyTo.story),
    unsupported: message.is_unsupported === true,
  };
}

function storyOf(story: unknown): MessageRow['replyStory'] {
  if (!isRecord(story)) return null;
  return { id: text(story.id) ?? null, url: webUrl(story.url) };
}

/** Webhooks send an array; the Graph API's `{ data: [...] }` is taken too. */
function attachmentsOf(value: unknown): MessageRow['attachments'] {
  const list = Array.isArray(value) ? value : isRecord(value) && Array.isArray(value.data) ? value.data : [];
  return list.map(attachmentOf);
}

/**
 * `{type, payload: {url, title?}}` as documented; a `fallback` may instead carry `title` and `URL`
 * beside `"payload": null` (Messenger's documented link share), and some carry no payload at all.
 */
function attachmentOf(raw: unknown): MessageRow['attachments'][number] {
  const attachment = recordOf(raw);
  const payload = recordOf(attachment.payload);
  const url = webUrl(payload.url) ?? webUrl(attachment.url) ?? webUrl(attachment.URL);
  const title = text(payload.title) ?? text(attachment.title);
  return { type: text(attachment.type) ?? 'unknown', url, ...(title === undefined ? {} : { title }) };
}
