import { describe, expect, it } from 'vitest';
import { type Fields, prefixedFields, selectList } from './columns.ts';

interface Target {
  postId: string;
  position: number;
  username: string;
}
const TARGET: Fields<Target> = { postId: true, position: true, username: 'a.username' };

// Guarantee: a statement built from `Fields<T>` returns rows under T's own field names, so
// `query<T>()` needs no per-field mapping.
describe('selectList', () => {
  it('aliases each snake_case column to its field, with expressions where given', () => {
    expect(selectList(TARGET)).toBe('post_id AS "postId", position AS "position", a.username AS "username"');
  });

  it('qualifies columns by table and prefixes output names for a join', () => {
    expect(selectList(TARGET, { table: 't', prefix: 't_' })).toBe(
      't.post_id AS "t_postId", t.position AS "t_position", a.username AS "t_username"',
    );
  });

  it('reads prefixed fields back under their own names', () => {
    const row = { id: 'p1', t_postId: 'p1', t_position: 2, t_username: 'shop' };
    expect(prefixedFields(row, TARGET, 't_')).toEqual({ postId: 'p1', position: 2, username: 'shop' });
  });
});
