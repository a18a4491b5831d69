import { describe, expect, it } from 'vitest';
import { LocalCache } from '../src/index.ts';

// The one in-memory cache: bounded in entries or bytes (least recently used out first) and in
// age. Its drops on an owner's announcements are tested with @svc/bus (announced-keys.test.ts).
const keys = (cache: Pick<LocalCache<unknown>, 'peek'>, candidates: string[]) =>
  candidates.filter((key) => cache.peek(key) !== undefined);

describe('LocalCache bounds', () => {
  // Guarantee: at its entry bound the least recently used entry goes, not everything.
  it('keeps at most maxEntries, dropping the least recently used', () => {
    const cache = new LocalCache<number>({ maxEntries: 3, maxAgeMs: 60_000 });
    cache.set('a', 1);
    cache.set('b', 2);
    cache.set('c', 3);
    cache.peek('a');
    cache.set('d', 4);
    expect(cache.size).toBe(3);
    expect(keys(cache, ['a', 'b', 'c', 'd'])).toEqual(['a', 'c', 'd']);
  });

  // Guarantee: a byte budget holds (oldest out first), and one value too large for it is not kept.
  it('keeps at most maxBytes, and never one value above an eighth of it', () => {
    const cache = new LocalCache<Buffer>({ maxBytes: 800, sizeOf: (b) => b.length, maxAgeMs: 60_000 });
    for (let i = 0; i < 10; i++) cache.set(`f${i}`, Buffer.alloc(100));
    expect(cache.keptBytes).toBe(800);
    expect(keys(cache, ['f0', 'f1', 'f2', 'f9'])).toEqual(['f2', 'f9']);
    cache.set('big', Buffer.alloc(101));
    expect(cache.peek('big')).toBeUndefined();
    cache.set('f9', Buffer.alloc(10));
    expect(cache.keptBytes).toBe(710);
  });

  // Guarantee: forgetWhere drops exactly the entries whose keys pass its test, and their bytes.
  it('forgets the entries a test picks', () => {
    const cache = new LocalCache<Buffer>({ maxBytes: 8000, sizeOf: (b) => b.length, maxAgeMs: 60_000 });
    for (const key of ['m1.a', 'm1.b', 'm2.a']) cache.set(key, Buffer.alloc(100));
    cache.forgetWhere((key) => key.startsWith('m1.'));
    expect(keys(cache, ['m1.a', 'm1.b', 'm2.a'])).toEqual(['m2.a']);
    expect(cache.keptBytes).toBe(100);
  });

  // Guarantee: nothing is served past its age, whether it was set or loaded, and hits do not renew it.
  it('forgets entries past maxAgeMs', async () => {
    let now = 1_000_000;
    let loads = 0;
    const cache = new LocalCache<string>({
      maxAgeMs: 60_000,
      now: () => now,
      load: async (key) => `${key}-${++loads}`,
    });
    cache.set('set', 'value');
    expect(await cache.get('loaded')).toBe('loaded-1');
    now += 59_000;
    expect(cache.peek('set')).toBe('value');
    expect(await cache.get('loaded')).toBe('loaded-1');
    now += 1_000;
    expect(cache.peek('set')).toBeUndefined();
    expect(await cache.get('loaded')).toBe('loaded-2');
    expect(cache.size).toBe(1);
  });

  // Guarantee: callers asking at once share one load; a failed load is not remembered.
  it('shares a load and does not keep a failure', async () => {
    let loads = 0;
    let fail = true;
    const cache = new LocalCache<string>({
      maxAgeMs: 60_000,
      load: async (key) => {
        loads += 1;
        if (fail) throw new Error('owner unavailable');
        return key;
      },
    });
    const failed = await Promise.allSettled([cache.get('k'), cache.get('k')]);
    expect(failed.map((r) => r.status)).toEqual(['rejected', 'rejected']);
    expect(loads).toBe(1);
    fail = false;
    expect(await cache.get('k')).toBe('k');
    expect(loads).toBe(2);
  });
});
