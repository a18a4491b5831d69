import { describe, expect, it } from 'vitest';
import { changedContent, type MessageContent } from './message-changes.ts';

const stored: MessageContent = {
  text: 'hello',
  attachments: [{ type: 'image', url: 'https://lookaside.fbsbx.com/a.jpg' }],
  replyStory: null,
  reactions: [],
  hidden: false,
  editedAt: null,
  deletedAt: null,
};
const at = (second: number) => new Date(Date.UTC(2026, 10, 26, 10, 0, second));

describe('changes to a stored message', () => {
  // Guarantee: an edit delivered again, or an older edit delivered after a newer one, changes nothing.
  it('applies an edit once, and never an older one over a newer one', () => {
    const edited = changedContent(stored, { kind: 'edit', text: 'hello!', at: at(2) });
    expect(edited).toMatchObject({ text: 'hello!', editedAt: at(2) });
    if (!edited) throw new Error('not edited');
    expect(changedContent(edited, { kind: 'edit', text: 'hello!', at: at(2) })).toBeNull();
    expect(changedContent(edited, { kind: 'edit', text: 'hello?', at: at(1) })).toBeNull();
  });

  // Guarantee: an unsent message keeps nothing of what it said, and nothing changes it afterwards.
  it('drops the content of an unsent message and keeps it unsent', () => {
    const gone = changedContent(stored, { kind: 'delete', at: at(3) });
    expect(gone).toMatchObject({ text: null, attachments: [], reactions: [], deletedAt: at(3) });
    if (!gone) throw new Error('not deleted');
    expect(changedContent(gone, { kind: 'edit', text: 'back', at: at(4) })).toBeNull();
    expect(changedContent(gone, { kind: 'delete', at: at(5) })).toBeNull();
  });

  // Guarantee: one reaction per person, replaced in place, removed by unreact, a repeat changes nothing.
  it('keeps one reaction per person', () => {
    const love = { kind: 'reaction' as const, from: '61', reaction: { reaction: 'love', emoji: '❤️' } };
    const one = changedContent(stored, love);
    if (!one) throw new Error('no reaction');
    expect(changedContent(one, love)).toBeNull();
    const two = changedContent(one, { ...love, from: '62' });
    if (!two) throw new Error('no second reaction');
    const wow = changedContent(two, { ...love, reaction: { reaction: 'wow', emoji: '😮' } });
    expect(wow?.reactions.map((r) => [r.from, r.reaction])).toEqual([
      ['61', 'wow'],
      ['62', 'love'],
    ]);
    expect(changedContent(stored, { ...love, reaction: null })).toBeNull();
    expect(changedContent(two, { ...love, reaction: null })?.reactions.map((r) => r.from)).toEqual(['62']);
  });

  // Guarantee: hiding a hidden comment (or showing a shown one) changes nothing.
  it('hides and shows only when it changes', () => {
    expect(changedContent(stored, { kind: 'hide', hidden: false })).toBeNull();
    expect(changedContent(stored, { kind: 'hide', hidden: true })?.hidden).toBe(true);
  });
});
