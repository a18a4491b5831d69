import { describe, expect, it } from 'vitest';
import { Semaphore } from './semaphore.ts';

const tick = () => new Promise((resolve) => setTimeout(resolve, 5));

describe('Semaphore', () => {
  // Guarantee: no more than `size` tasks run at once, waiting tasks start in their order of
  // arrival, and a task that fails gives its slot back.
  it('bounds how many tasks run at once', async () => {
    const semaphore = new Semaphore(2);
    let active = 0;
    let most = 0;
    const started: number[] = [];
    const task = (n: number) =>
      semaphore.run(async () => {
        started.push(n);
        most = Math.max(most, ++active);
        await tick();
        active--;
        if (n === 1) throw new Error('task 1 failed');
        return n;
      });
    const results = await Promise.allSettled([0, 1, 2, 3, 4, 5].map(task));
    expect(most).toBe(2);
    expect(started).toEqual([0, 1, 2, 3, 4, 5]);
    expect(results.map((r) => r.status)).toEqual([
      'fulfilled',
      'rejected',
      'fulfilled',
      'fulfilled',
      'fulfilled',
      'fulfilled',
    ]);
    // Every slot came back (the failed task's too): two more still run side by side.
    most = 0;
    await Promise.all([6, 7].map(task));
    expect(most).toBe(2);
  });
});
