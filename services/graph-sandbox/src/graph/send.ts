import { requireScope } from '../auth.ts';
import { graphTime } from '../clock.ts';
import type { Ctx } from '../context.ts';
import { messagingEvent } from '../events.ts';
import { invalidParam, outsideWindow } from '../graph-errors.ts';
import { jsonParam, optionalString, type Params } from '../params.ts';
import type { Comment, Platform, Token } from '../store.ts';
import { addMessage, conversationFor, participantFor } from '../threads.ts';

const HOUR_MS = 3_600_000;

function textOf(ctx: Ctx, platform: Platform): string {
  const message = jsonParam(ctx.params, 'message');
  const text = message && typeof message === 'object' ? (message as Params).text : undefined;
  if (typeof text !== 'string' || text === '') {
    throw invalidParam(
      '(#100) The sandbox Send API accepts text messages only: message.text is required',
      2534015,
    );
  }
  if (platform === 'instagram' && Buffer.byteLength(text) >= 1000) {
    throw invalidParam('(#100) Message text must be less than 1000 bytes', 2534015);
  }
  if (platform === 'messenger' && [...text].length > 2000) {
    throw invalidParam('(#100) Length of param message[text] must be less than or equal to 2000');
  }
  return text;
}

/**
 * The standard 24 h window after the person's last message; `HUMAN_AGENT` stretches it to 7 days
 * (facts §4.4). Errors: 10/2018278 on Messenger, 10/2534022 on Instagram.
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
  const recipient = jsonParam(ctx.params, 'recipient');
  if (!recipient || typeof recipient !== 'object')
    throw invalidParam('(#100) param recipient must be non-empty.');
  const { id, comment_id: commentId } = recipient as Params;
  if (typeof commentId === 'string') return privateReply(ctx, token, pageId, commentId);
  const participant = typeof id === 'string' ? ctx.world.store.participants.get(id) : undefined;
  if (!participant || !accountIds(ctx, pageId).includes(participant.accountId)) {
    throw invalidParam('(#100) No matching user found', 2018001);
  }
  const platform = participant.platform;
  requireScope(token, platform === 'instagram' ? 'instagram_manage_messages' : 'pages_messaging');
  if (platform === 'messenger' && !optionalString(ctx.params, 'messaging_type')) {
    throw invalidParam('(#100) param messaging_type must be one of {RESPONSE, UPDATE, MESSAGE_TAG}');
  }
  const text = textOf(ctx, platform);
  const conversation = conversationFor(ctx.world, participant);
  checkWindow(ctx, platform, conversation.lastInboundAt);
  const message = addMessage(ctx.world, conversation, text, false);
  record(ctx, 'message', platform, conversation.accountId, message.id, participant.id, null, text);
  if (ctx.world.config.sendEchoes) {
    void ctx.world.webhooks.sendEvent(
      messagingEvent(ctx.world, platform, conversation.accountId, message, true),
    );
  }
  return { recipient_id: participant.id, message_id: message.id };
}

/** One private reply per comment, within 7 days, never to the account's own comment (facts §4.4). */
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
  const text = textOf(ctx, comment.platform);
  const participant = participantFor(ctx.world, comment.platform, comment.accountId, {
    id: comment.fromId,
    username: comment.fromName,
    name: comment.fromName,
  });
  const conversation = conversationFor(ctx.world, participant);
  const message = addMessage(ctx.world, conversation, text, false);
  comment.privateReplyAt = ctx.now;
  record(
    ctx,
    'private_reply',
    comment.platform,
    comment.accountId,
    message.id,
    participant.id,
    comment.id,
    text,
  );
  return { recipient_id: participant.id, message_id: message.id };
}

export function record(
  ctx: Ctx,
  type: 'message' | 'private_reply' | 'comment' | 'comment_reply',
  platform: Platform,
  accountId: string,
  id: string,
  recipientId: string | null,
  objectId: string | null,
  text: string,
): void {
  ctx.world.store.sent.push({
    type,
    network: platform === 'instagram' ? 'instagram' : 'facebook',
    account_id: accountId,
    id,
    recipient_id: recipientId,
    object_id: objectId,
    text,
    sent_at: graphTime(ctx.now),
  });
}
