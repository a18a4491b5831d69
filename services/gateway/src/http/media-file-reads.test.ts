import { describe, expect, it } from 'vitest';
import { SharedFileReads, type WholeFile } from './media-file-reads.ts';

const file = (bytes: number): WholeFile => ({
  mime: 'image/jpeg',
  size: bytes,
  expiresAt: '2026-12-01T00:00:00.000Z',
  bytes: Buffer.alloc(bytes),
});

describe('SharedFileReads', () => {
  // Guarantee: fetches arriving while a read is in flight get its file; once it is settled the
  // next fetch finds nothing in flight (nothing is kept after a read).
  it('shares a read while it is in flight only', async () => {
    const reads = new SharedFileReads(1024);
    expect(reads.inFlight('t')).toBeUndefined();
    const settle = reads.start('t');
    const waiting = reads.inFlight('t');
    const read = file(10);
    settle(read);
    expect(await waiting).toBe(read);
    expect(reads.inFlight('t')).toBeUndefined();
  });

  // Guarantee: a read that shares nothing (a large file streamed, a failure) lets the waiting
  // fetches read for themselves; settling twice changes nothing.
  it('tells waiting fetches when there is nothing to share', async () => {
    const reads = new SharedFileReads(1024);
    const settle = reads.start('t');
    const waiting = reads.inFlight('t');
    settle(undefined);
    settle(file(10));
    expect(await waiting).toBeUndefined();
  });

  // Guarantee: whole reads are bounded per file (a 16th of the budget) and in all; memory given
  // back makes room again.
  it('bounds the memory of whole reads', () => {
    const reads = new SharedFileReads(1600);
    expect(reads.reserve(101)).toBe(false);
    for (let i = 0; i < 16; i++) expect(reads.reserve(100)).toBe(true);
    expect(reads.reserve(1)).toBe(false);
    reads.release(100);
    expect(reads.reserve(100)).toBe(true);
    expect(new SharedFileReads(0).reserve(1)).toBe(false);
  });
});
