import { newId } from '@svc/ids';
import { describe, expect, it } from 'vitest';
import { afterPosition, decodeCursor, encodeCursor } from './conversation-cursor.ts';

const id = newId('conversation');
const encoded = (value: unknown) => Buffer.from(JSON.stringify(value)).toString('base64url');

describe('conversation cursors', () => {
  // Guarantee: a cursor gives back the exact position it was made from (millisecond time, or none).
  it('round-trips a position', () => {
    const at = new Date('2031-02-03T04:05:06.789Z');
    expect(decodeCursor(encodeCursor({ at, id }))).toEqual({ at, id });
    expect(decodeCursor(encodeCursor({ at: null, id }))).toEqual({ at: null, id });
  });

  // Guarantee: anything but a cursor of this list is a validation_error on starting_after.
  it.each([
    ['not base64url', 'a b'],
    ['not JSON', Buffer.from('{').toString('base64url')],
    ['another id kind', encoded({ t: 1, id: newId('message') })],
    ['an extra key', encoded({ t: 1, id, page: 2 })],
    ['a fractional time', encoded({ t: 1.5, id })],
    ['too long', 'A'.repeat(201)],
  ])('refuses %s', (_what, cursor) => {
    expect(() => decodeCursor(cursor)).toThrow(expect.objectContaining({ field: 'starting_after' }));
  });

  // Guarantee: "after" follows the list's order: older activity, the same time with a smaller id,
  // then the conversations without messages; after one of those, only smaller ids among them.
  it('builds the condition after a position', () => {
    const values: unknown[] = ['partner'];
    expect(afterPosition({ at: new Date(5), id }, values)).toBe(
      '((c.last_message_at, c.id) < ($3, $2) OR c.last_message_at IS NULL)',
    );
    expect(values).toEqual(['partner', id, new Date(5)]);
    expect(afterPosition({ at: null, id }, [])).toBe('(c.last_message_at IS NULL AND c.id < $1)');
  });
});
