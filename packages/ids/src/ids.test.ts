import { describe, expect, it } from 'vitest';
import { isId, newId } from './index.ts';

describe('ids', () => {
  // Guarantee: ids sort by creation time, so listing by id is listing by age.
  it('sorts by creation time', () => {
    const earlier = newId('workspace', Date.UTC(2026, 0, 1));
    const later = newId('workspace', Date.UTC(2026, 0, 1) + 1);
    expect(earlier < later).toBe(true);
    expect([later, earlier].sort()).toEqual([earlier, later]);
  });

  it('carries its prefix and validates by kind', () => {
    const id = newId('post');
    expect(id).toMatch(/^post_[0-9A-Za-z]{25}$/);
    expect(isId('post', id)).toBe(true);
    expect(isId('workspace', id)).toBe(false);
    expect(isId('post', 'post_../../etc')).toBe(false);
  });

  it('does not repeat', () => {
    const ids = new Set(Array.from({ length: 10_000 }, () => newId('event')));
    expect(ids.size).toBe(10_000);
  });
});
