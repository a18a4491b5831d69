import type { Conversation, Message, MessageAttachment, Participant, Platform } from './store.ts';
import type { World } from './world.ts';

/** DM threads: one conversation per (account, person); shared by inbound DMs, sends and private replies. */
export function participantFor(
  world: World,
  platform: Platform,
  accountId: string,
  from: { id?: string | undefined; username?: string | undefined; name?: string | undefined },
): Participant {
  const s = world.store;
  const known =
    (from.id ? s.participants.get(from.id) : undefined) ??
    [...s.participants.values()].find(
      (p) => p.accountId === accountId && from.username !== undefined && p.username === from.username,
    );
  if (known) return known;
  const id = from.id ?? (platform === 'instagram' ? world.ids.igsid() : world.ids.psid());
  const label = from.username ?? from.name ?? `user_${id.slice(-6)}`;
  const participant: Participant = {
    id,
    platform,
    accountId,
    username: platform === 'instagram' ? label : null,
    name: from.name ?? label,
  };
  s.participants.set(id, participant);
  return participant;
}

export function conversationFor(world: World, participant: Participant): Conversation {
  const existing = world.store.findConversation(participant.accountId, participant.id);
  if (existing) return existing;
  const conversation: Conversation = {
    id: participant.platform === 'instagram' ? world.ids.igConversation() : world.ids.messengerConversation(),
    platform: participant.platform,
    accountId: participant.accountId,
    participantId: participant.id,
    updatedAt: world.clock.now(),
    messageIds: [],
    lastInboundAt: null,
  };
  world.store.conversations.set(conversation.id, conversation);
  return conversation;
}

/** What a message says: text, attachments, or both; `appId` is the app that sent an outbound one. */
export interface MessageContent {
  text: string | null;
  attachments?: MessageAttachment[];
  appId?: string | null;
}

export function addMessage(
  world: World,
  conversation: Conversation,
  content: MessageContent,
  inbound: boolean,
): Message {
  const now = world.clock.now();
  const message: Message = {
    id: conversation.platform === 'instagram' ? world.ids.igMessage() : world.ids.messengerMessage(),
    conversationId: conversation.id,
    fromId: inbound ? conversation.participantId : conversation.accountId,
    toId: inbound ? conversation.accountId : conversation.participantId,
    text: content.text,
    attachments: content.attachments ?? [],
    createdAt: now,
    inbound,
    appId: inbound ? null : (content.appId ?? null),
  };
  world.store.messages.set(message.id, message);
  conversation.messageIds.push(message.id);
  conversation.updatedAt = now;
  if (inbound) conversation.lastInboundAt = now;
  return message;
}
