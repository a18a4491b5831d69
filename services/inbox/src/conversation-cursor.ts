import { errors } from '@svc/errors';
import { isId } from '@svc/ids';
import { z } from 'zod';

/**
 * Cursor paging of conversation lists (`starting_after`, `next_cursor`), in the order lists show:
 * latest activity first (`last_message_at DESC NULLS LAST, id DESC`). A cursor is the position of
 * the last conversation of a page as it was when the page was read, not the conversation itself,
 * so the next page starts right after that position wherever the conversation has moved since.
 *
 * What it guarantees, while conversations get new activity during a walk: `last_message_at` only
 * moves forward, so a conversation with new activity moves to the front, ahead of any cursor:
 *  - every conversation whose activity does not change during the walk is listed exactly once;
 *  - no conversation is ever listed twice;
 *  - one whose activity changes before the walk reaches it is not listed by this walk: it is at
 *    the front (the first page read again shows it, and its message event announced it).
 * Offset pages (`page`) shift instead: new activity repeats or skips conversations across pages.
 */
export interface ConversationPosition {
  /** `last_message_at` of the conversation, null for one without messages (they come last). */
  at: Date | null;
  id: string;
}

/**
 * The cursor text: base64url of `{"t": <ms or null>, "id": "conv_…"}`. Opaque to partners (the
 * documentation says so); it names only a position within the caller's own list, which the query
 * scopes by the caller anyway, so a forged cursor can only start a list elsewhere in it. Every
 * cursor is checked before use: anything this list did not return is a 400 naming starting_after.
 */
const MAX_CURSOR_LENGTH = 200;
const cursorShape = z.strictObject({
  t: z.number().int().min(0).max(8.64e15).nullable(),
  id: z.string().refine((id) => isId('conversation', id)),
});

export function encodeCursor(position: ConversationPosition): string {
  const text = JSON.stringify({ t: position.at?.getTime() ?? null, id: position.id });
  return Buffer.from(text, 'utf8').toString('base64url');
}

/** The position a cursor names; a 400 `validation_error` on `starting_after` for anything else. */
export function decodeCursor(cursor: string): ConversationPosition {
  const refuse = () =>
    errors.validation('starting_after', 'starting_after must be a next_cursor returned by this list');
  if (cursor.length > MAX_CURSOR_LENGTH || !/^[A-Za-z0-9_-]+$/.test(cursor)) throw refuse();
  let value: unknown;
  try {
    value = JSON.parse(Buffer.from(cursor, 'base64url').toString('utf8'));
  } catch {
    throw refuse();
  }
  const parsed = cursorShape.safeParse(value);
  if (!parsed.success) throw refuse();
  return { at: parsed.data.t === null ? null : new Date(parsed.data.t), id: parsed.data.id };
}

/**
 * The SQL condition "after this position" in the list's order (alias `c`), with its values
 * appended to `values` (placeholders numbered after those already there).
 */
export function afterPosition(position: ConversationPosition, values: unknown[]): string {
  values.push(position.id);
  const id = `$${values.length}`;
  if (position.at === null) return `(c.last_message_at IS NULL AND c.id < ${id})`;
  values.push(position.at);
  const at = `$${values.length}`;
  return `((c.last_message_at, c.id) < (${at}, ${id}) OR c.last_message_at IS NULL)`;
}
