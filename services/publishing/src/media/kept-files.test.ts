import { describe, expect, it } from 'vitest';
import { KeptFiles } from './kept-files.ts';

const bytes = (n: number, fill = 1) => Buffer.alloc(n, fill);

describe('KeptFiles', () => {
  // Guarantee: a kept file is answered as it was stored, until it ages out.
  it('answers a file until it is too old', () => {
    let now = 0;
    const kept = new KeptFiles(1000, 60_000, () => now);
    kept.set('med_a', bytes(10, 7));
    expect(kept.get('med_a')).toEqual(bytes(10, 7));
    now = 59_999;
    expect(kept.get('med_a')).toBeDefined();
    now = 60_000;
    expect(kept.get('med_a')).toBeUndefined();
    expect(kept.size).toBe(0);
  });

  // Guarantee: the byte budget holds; the oldest files go first, and a file too large is not kept.
  it('stays within its budget', () => {
    const kept = new KeptFiles(400, 60_000);
    for (let i = 0; i < 8; i++) kept.set(`f${i}`, bytes(50));
    expect(kept.size).toBe(400);
    kept.set('f8', bytes(50));
    expect(kept.get('f0')).toBeUndefined();
    expect(kept.get('f1')).toBeDefined();
    expect(kept.get('f8')).toBeDefined();
    expect(kept.size).toBe(400);
    kept.set('huge', bytes(51));
    expect(kept.get('huge')).toBeUndefined();
    expect(kept.size).toBe(400);
  });

  // Guarantee: a deleted media's file is not answered again, and replacing a key counts once.
  it('forgets deleted and replaced files', () => {
    const kept = new KeptFiles(100, 60_000);
    kept.set('a', bytes(10));
    kept.set('a', bytes(12));
    expect(kept.size).toBe(12);
    kept.delete('a');
    expect(kept.get('a')).toBeUndefined();
    expect(kept.size).toBe(0);
  });
});
