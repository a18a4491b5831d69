import { describe, expect, it } from 'vitest';
import { IntakeBatches } from './intake-batches.ts';

describe('intake batches', () => {
  // Guarantee: bodies that arrive while a transaction is being written share the next one
  // (one commit for many single-message bodies), and each body resolves only after that commit.
  it('records the bodies gathered meanwhile in one write', async () => {
    const writes: string[][] = [];
    const batches = new IntakeBatches<string>(async (plans) => {
      writes.push(plans);
      await new Promise((resolve) => setTimeout(resolve, 20));
    });
    const first = batches.record(['a']);
    await new Promise((resolve) => setTimeout(resolve, 5)); // the first write is under way
    const rest = [batches.record(['b']), batches.record(['c', 'd'])];
    await Promise.all([first, ...rest]);
    expect(writes).toEqual([['a'], ['b', 'c', 'd']]);
  });

  // Guarantee: a body whose messages cannot be written fails alone (its message is redelivered),
  // while the bodies batched with it are written and acked.
  it('writes a failed batch again body by body, so only the failing body fails', async () => {
    const written: string[] = [];
    const batches = new IntakeBatches<string>(async (plans) => {
      await new Promise((resolve) => setTimeout(resolve, 5));
      if (plans.includes('bad')) throw new Error('bad body');
      written.push(...plans);
    });
    const results = await Promise.allSettled([
      batches.record(['a']),
      batches.record(['b']),
      batches.record(['bad']),
      batches.record(['c']),
    ]);
    expect(results.map((r) => r.status)).toEqual(['fulfilled', 'fulfilled', 'rejected', 'fulfilled']);
    expect(written.sort()).toEqual(['a', 'b', 'c']);
  });
});
