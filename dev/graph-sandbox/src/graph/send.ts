import { ATTACHMENT_TYPES, fetchSendAttachment } from '../attachments.ts';
import { requireScope } from '../auth.ts';
import { graphTime } from '../clock.ts';
import type { Ctx } from '../context.ts';
import { messagingEvent } from '../events.ts';
import { invalidParam, outsideWindow } from '../graph-errors.ts';
import { jsonParam, optionalString, type Params } from '../params.ts';
import type { AttachmentType, Comment, MessageAttachment, Platform, SentRecord, Token } from '../store.ts';
import { addMessage, conversationFor, participantFor } from '../threads.ts';

const HOUR_MS = 3_600_000;

interface AttachmentSpec {
  type: AttachmentType;
  url: string | null;
  attachmentId: string | null;
  reusable: boolean;
}

type Outgoing = { text: string; attachment: null } | { text: null; attachment: AttachmentSpec };

const objectOf = (value: unknown): Params => (value && typeof value === 'object' ? (value as Params) : {});

function checkText(text: string, platform: Platform): void {
  if (platform === 'instagram' && Buffer.byteLength(text) >= 1000) {
    throw invalidParam('(#100) Message text must be less than 1000 bytes', 2534015);
  }
  if (platform === 'messenger' && [...text].length > 2000) {
    throw invalidParam('(#100) Length of param message[text] must be less than or equal to 2000');
  }
}

function attachmentSpec(raw: unknown): AttachmentSpec {
  const attachment = objectOf(raw);
  const payload = objectOf(attachment.payload);
  const type = ATTACHMENT_TYPES.find((t) => t === attachment.type);
  if (!type) {
    throw invalidParam(
      `(#100) param message[attachment][type] must be one of {${ATTACHMENT_TYPES.join(', ')}}`,
    );
  }
  const url = typeof payload.url === 'string' && payload.url !== '' ? payload.url : null;
  const id = payload.attachment_id;
  const attachmentId = typeof id === 'string' || typeof id === 'number' ? String(id) : null;
  if (!url && !attachmentId) {
    throw invalidParam('(#100) message[attachment][payload] needs a url or an attachment_id', 2534015);
  }
  const reusable = payload.is_reusable === true || payload.is_reusable === 'true';
  return { type, url, attachmentId, reusable };
}

/** `message.text` or `message.attachment`, one of the two (facts §4.3). */
function outgoingOf(ctx: Ctx, platform: Platform): Outgoing {
  const message = objectOf(jsonParam(ctx.params, 'message'));
  if (message.attachment !== undefined) {
    if (message.text !== undefined) {
      throw invalidParam('(#100) Only one of message[text] and message[attachment] can be given', 2534015);
    }
    return { text: null, attachment: attachmentSpec(message.attachment) };
  }
  const text = message.text;
  if (typeof text !== 'string' || text === '') {
    throw invalidParam('(#100) message[text] or message[attachment] is required', 2534015);
  }
  checkText(text, platform);
  return { text, attachment: null };
}

/** A new download, or a file sent before with `is_reusable` (by `attachment_id`, same account only). */
async function upload(ctx: Ctx, accountId: string, spec: AttachmentSpec) {
  const { world } = ctx;
  if (spec.attachmentId !== null) {
    const known = world.store.reusableAttachments.get(spec.attachmentId);
    if (!known || known.accountId !== accountId) throw invalidParam('(#100) Invalid attachment_id', 2018074);
    return { attachment: { ...known.attachment, id: world.ids.attachment() }, attachmentId: null };
  }
  const attachment: MessageAttachment = await fetchSendAttachment(world, spec.type, spec.url ?? '');
  if (!spec.reusable) return { attachment, attachmentId: null };
  const attachmentId = world.ids.attachment();
  world.store.reusableAttachments.set(attachmentId, { accountId, attachment });
  return { attachment, attachmentId };
}

/**
 * The standard 24 h window after the person's last message; `HUMAN_AGENT` stretches it to 7 days
 * (facts §4.4). Errors: 10/2018278 on Messenger, 10/2534022 on Instagram. Both the last message's
 * time and "now" come from the sandbox clock, so `POST /__sandbox/clock` closes the window.
 */
function checkWindow(ctx: Ctx, platform: Platform, lastInboundAt: number | null): void {
  const tag = optionalString(ctx.params, 'tag');
  const humanAgent = optionalString(ctx.params, 'messaging_type') === 'MESSAGE_TAG' && tag === 'HUMAN_AGENT';
  const window = (humanAgent ? 7 * 24 : 24) * HOUR_MS;
  if (lastInboundAt === null || ctx.now - lastInboundAt > window) throw outsideWindow(platform);
}

function accountIds(ctx: Ctx, pageId: string): string[] {
  const igId = ctx.world.store.pages.get(pageId)?.igId;
  return igId ? [pageId, igId] : [pageId];
}

/** Send API (facts §4.3): `recipient.id` for a thread, `recipient.comment_id` for a private reply. */
export async function sendMessage(ctx: Ctx, token: Token, pageId: string) {
  const { world } = ctx;
  const recipient = jsonParam(ctx.params, 'recipient');
  if (!recipient || typeof recipient !== 'object')
    throw invalidParam('(#100) param recipient must be non-empty.');
  const { id, comment_id: commentId } = recipient as Params;
  if (typeof commentId === 'string') return privateReply(ctx, token, pageId, commentId);
  const participant = typeof id === 'string' ? world.store.participants.get(id) : undefined;
  if (!participant || !accountIds(ctx, pageId).includes(participant.accountId)) {
    throw invalidParam('(#100) No matching user found', 2018001);
  }
  const platform = participant.platform;
  requireScope(token, platform === 'instagram' ? 'instagram_manage_messages' : 'pages_messaging');
  if (platform === 'messenger' && !optionalString(ctx.params, 'messaging_type')) {
    throw invalidParam('(#100) param messaging_type must be one of {RESPONSE, UPDATE, MESSAGE_TAG}');
  }
  const outgoing = outgoingOf(ctx, platform);
  const conversation = conversationFor(world, participant);
  checkWindow(ctx, platform, conversation.lastInboundAt);
  const file = outgoing.attachment ? await upload(ctx, conversation.accountId, outgoing.attachment) : null;
  const message = addMessage(
    world,
    conversation,
    { text: outgoing.text, attachments: file ? [file.attachment] : [], appId: world.config.appId },
    false,
  );
  const webhookId = world.config.sendEchoes
    ? world.webhooks.queueEvent(messagingEvent(world, platform, conversation.accountId, message))
    : null;
  record(ctx, {
    type: 'message',
    platform,
    accountId: conversation.accountId,
    id: message.id,
    recipientId: participant.id,
    text: outgoing.text,
    // The URL the product sent (the network's own copy is on the message).
    attachmentUrl: file ? (file.attachment.sourceUrl ?? file.attachment.url) : null,
    tag: optionalString(ctx.params, 'tag') ?? null,
    webhookId,
  });
  const answer: Record<string, string> = { recipient_id: participant.id, message_id: message.id };
  if (file?.attachmentId) answer.attachment_id = file.attachmentId;
  return answer;
}

/**
 * One private reply per comment, within 7 days by the sandbox clock, never to the account's own
 * comment (facts §4.4). Text only in the sandbox.
 */
async function privateReply(ctx: Ctx, token: Token, pageId: string, commentId: string) {
  const comment: Comment | undefined = ctx.world.store.comments.get(commentId);
  const tooOld = comment ? ctx.now - comment.createdAt > 7 * 24 * HOUR_MS : true;
  if (
    !comment ||
    !accountIds(ctx, pageId).includes(comment.accountId) ||
    comment.fromId === comment.accountId ||
    comment.privateReplyAt !== null ||
    tooOld
  ) {
    throw invalidParam('(#100) The comment is not valid for a private reply', 2534025);
  }
  requireScope(token, comment.platform === 'instagram' ? 'instagram_manage_messages' : 'pages_messaging');
  const { text } = outgoingOf(ctx, comment.platform);
  if (text === null) throw invalidParam('(#100) The sandbox takes text private replies only', 2534015);
  const participant = participantFor(ctx.world, comment.platform, comment.accountId, {
    id: comment.fromId,
    username: comment.fromName,
    name: comment.fromName,
  });
  const conversation = conversationFor(ctx.world, participant);
  const message = addMessage(ctx.world, conversation, { text, appId: ctx.world.config.appId }, false);
  comment.privateReplyAt = ctx.now;
  record(ctx, {
    type: 'private_reply',
    platform: comment.platform,
    accountId: comment.accountId,
    id: message.id,
    recipientId: participant.id,
    objectId: comment.id,
    text,
    tag: optionalString(ctx.params, 'tag') ?? null,
  });
  return { recipient_id: participant.id, message_id: message.id };
}

interface SentEntry {
  type: SentRecord['type'];
  platform: Platform;
  accountId: string;
  id: string;
  recipientId?: string | null;
  objectId?: string | null;
  text: string | null;
  attachmentUrl?: string | null;
  tag?: string | null;
  webhookId?: string | null;
}

/** The sent log (`GET /__sandbox/sent`): everything the product made the "network" say. */
export function record(ctx: Ctx, e: SentEntry): void {
  ctx.world.store.sent.push({
    type: e.type,
    network: e.platform === 'instagram' ? 'instagram' : 'facebook',
    account_id: e.accountId,
    id: e.id,
    recipient_id: e.recipientId ?? null,
    object_id: e.objectId ?? null,
    text: e.text,
    attachment_url: e.attachmentUrl ?? null,
    tag: e.tag ?? null,
    webhook_id: e.webhookId ?? null,
    sent_at: graphTime(ctx.now),
  });
}
