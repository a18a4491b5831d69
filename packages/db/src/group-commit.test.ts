import { describe, expect, it } from 'vitest';
import { GroupCommit } from './group-commit.ts';

/** A writer that notes its batches and holds each write until `release` is called. */
function heldWriter() {
  const batches: number[][] = [];
  let release: () => void = () => {};
  const write = (batch: number[]) => {
    batches.push(batch);
    return new Promise<void>((resolve) => {
      release = resolve;
    });
  };
  return { batches, write, release: () => release() };
}

const tick = () => new Promise((resolve) => setImmediate(resolve));

describe('GroupCommit', () => {
  // Guarantee: what arrives while a batch is written goes together in the next one, in order,
  // and each caller resolves once its own item is written.
  it('gathers items during a write into the next batch', async () => {
    const w = heldWriter();
    const commit = new GroupCommit(w.write);
    const first = commit.add(1);
    await tick();
    const rest = [commit.add(2), commit.add(3), commit.addAll([4, 5])];
    expect(commit.backlog).toBe(4);
    w.release();
    await first;
    await tick();
    expect(w.batches).toEqual([[1], [2, 3, 4, 5]]);
    w.release();
    await Promise.all(rest);
    await commit.idle();
    expect(commit.backlog).toBe(0);
  });

  // Guarantee: a batch never holds more than maxBatch items.
  it('splits at maxBatch', async () => {
    const batches: number[][] = [];
    const commit = new GroupCommit(async (batch: number[]) => void batches.push(batch), { maxBatch: 2 });
    await commit.addAll([1, 2, 3, 4, 5]);
    expect(batches).toEqual([[1, 2], [3, 4], [5]]);
  });

  // Guarantee: with gatherMs, the items of the next few milliseconds share the first statement.
  it('waits gatherMs before the first write', async () => {
    const batches: number[][] = [];
    const commit = new GroupCommit(async (batch: number[]) => void batches.push(batch), { gatherMs: 20 });
    const first = commit.add(1);
    await new Promise((resolve) => setTimeout(resolve, 5));
    await Promise.all([first, commit.add(2)]);
    expect(batches).toEqual([[1, 2]]);
  });

  // Guarantee: with busyGatherMs, an item after a quiet spell (or two of one request) is written
  // at once, while a sustained stream of items, each finding the writer free, shares statements.
  it('gathers only under sustained load with busyGatherMs', async () => {
    const batches: number[][] = [];
    const commit = new GroupCommit(async (batch: number[]) => void batches.push(batch), { busyGatherMs: 10 });
    const sleep = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms));
    const started = performance.now();
    await Promise.all([commit.add(1), commit.add(2)]);
    expect(performance.now() - started).toBeLessThan(10);
    expect(batches).toEqual([[1, 2]]);
    // Items 2 ms apart: the average interval falls under 10 ms, and batches start to gather.
    const stream: Promise<void>[] = [];
    for (let i = 0; i < 60; i++) {
      stream.push(commit.add(100 + i));
      await sleep(2);
    }
    await Promise.all(stream);
    const streamed = batches.slice(1);
    expect(streamed.flat()).toHaveLength(60);
    expect(Math.max(...streamed.map((b) => b.length))).toBeGreaterThanOrEqual(3);
    expect(streamed.length).toBeLessThan(40);
  });

  // Guarantee: a failed write rejects the callers of that batch only; the next batch still goes.
  it('rejects only the failed batch', async () => {
    const commit = new GroupCommit(async (batch: number[]) => {
      if (batch.includes(1)) throw new Error('write failed');
    });
    const failed = expect(commit.add(1)).rejects.toThrow('write failed');
    await tick();
    const later = commit.add(2);
    await failed;
    await expect(later).resolves.toBeUndefined();
  });
});
