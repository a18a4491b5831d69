import { describe, expect, it } from 'vitest';
import { horizonOf, sideOf } from './history-horizon.ts';

/** A time of 2026-12-05 12:mm:ss(.ms); the networks' history gives whole seconds. */
const at = (time: string) => new Date(`2026-12-05T12:${time}Z`);

describe('history and news of an import', () => {
  // Guarantee: a DM written in the second its account connected is announced, even when the
  // import that reads it begins after it (its webhook then finds it stored and announces nothing).
  it('counts a message of the same second as the connection as news', () => {
    const horizon = horizonOf(at('00:01.500'), at('00:01.500'), at('00:00.700'));
    expect(sideOf(at('00:00'), horizon)).toBe('news');
    expect(sideOf(at('00:01'), horizon)).toBe('news');
  });

  // Guarantee: what was written before the account connected is history (no event, not unread).
  it('counts a message of the second before the connection as history', () => {
    const horizon = horizonOf(at('00:01.500'), at('00:01.500'), at('00:00.700'));
    expect(sideOf(new Date('2026-12-05T11:59:59Z'), horizon)).toBe('history');
  });

  // Guarantee: a message from before the first import is news only within the live margin (a
  // minute) of the run, however long after the connection it came; anything from the first
  // import's second on is news.
  it('draws the live margin a minute before the run and the first import at its second', () => {
    const horizon = horizonOf(at('05:00.400'), at('05:00.400'), at('00:00.100'));
    expect(sideOf(at('03:59'), horizon)).toBe('history');
    expect(sideOf(at('04:01'), horizon)).toBe('news');
    expect(sideOf(at('05:00'), horizon)).toBe('news');
  });
});
