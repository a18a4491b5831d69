import type { MessageRow } from './inbox-rows.ts';

/**
 * What the network says changed about a stored message or comment (meta-messaging.ts,
 * meta-feed.ts), and what that makes of it. Each change is applied only when it changes something,
 * so a webhook delivered twice, or a stale change delivered late, changes nothing and announces
 * nothing the second time.
 */
export type MessageChange =
  /** `message_edit`, or a Page comment `edited`: the new text, at the time of the edit. */
  | { kind: 'edit'; text: string | null; at: Date }
  /** An unsend (`is_deleted`) or a removed Page comment. */
  | { kind: 'delete'; at: Date }
  /** A Page comment hidden or shown again. */
  | { kind: 'hide'; hidden: boolean }
  /** A person reacted (`reaction` null: took their reaction back). */
  | { kind: 'reaction'; from: string; reaction: { reaction: string; emoji: string | null } | null };

/** The part of a stored message its changes rewrite. */
export type MessageContent = Pick<
  MessageRow,
  'text' | 'attachments' | 'replyStory' | 'reactions' | 'hidden' | 'editedAt' | 'deletedAt'
>;

/** The message's content after the change; null when the change changes nothing. */
export function changedContent(row: MessageContent, change: MessageChange): MessageContent | null {
  // What was unsent or removed stays so: nothing is kept to edit, hide or react to.
  if (row.deletedAt !== null) return null;
  const content = { ...row };
  switch (change.kind) {
    case 'edit':
      if (change.text === row.text || (row.editedAt !== null && row.editedAt > change.at)) return null;
      return { ...content, text: change.text, editedAt: change.at };
    case 'delete':
      // Withdrawn by its author: its words are not kept.
      return {
        ...content,
        text: null,
        attachments: [],
        replyStory: null,
        reactions: [],
        deletedAt: change.at,
      };
    case 'hide':
      return change.hidden === row.hidden ? null : { ...content, hidden: change.hidden };
    case 'reaction':
      return withReaction(content, change.from, change.reaction);
  }
}

/** One reaction per person: a new one replaces theirs in place, none removes it. */
function withReaction(
  content: MessageContent,
  from: string,
  reaction: { reaction: string; emoji: string | null } | null,
): MessageContent | null {
  const index = content.reactions.findIndex((r) => r.from === from);
  const mine = content.reactions[index];
  if (reaction === null) {
    if (!mine) return null;
    return { ...content, reactions: content.reactions.filter((r) => r.from !== from) };
  }
  if (mine && mine.reaction === reaction.reaction && mine.emoji === reaction.emoji) return null;
  const entry = { from, ...reaction };
  const reactions = mine
    ? content.reactions.map((r, i) => (i === index ? entry : r))
    : [...content.reactions, entry];
  return { ...content, reactions };
}
