import { describe, expect, it } from 'vitest';
import { SharedFileReads, type WholeFile } from './media-file-reads.ts';

const MEDIA = 'med_0123456789012345678901234';
const token = (media = MEDIA, variant = 'original') => `${media}.${variant}.sz1abc.${'A'.repeat(43)}`;

const file = (bytes: number, expiresAt = '2026-12-01T01:00:00.000Z'): WholeFile => ({
  mime: 'image/jpeg',
  size: bytes,
  expiresAt,
  bytes: Buffer.alloc(bytes),
});

/** A clock the test moves: 2026-12-01T00:00:00Z to start with. */
function clock() {
  let at = Date.parse('2026-12-01T00:00:00.000Z');
  return { now: () => at, pass: (ms: number) => (at += ms) };
}

function reads(options: { maxBytes?: number; keepMs?: number } = {}) {
  const time = clock();
  const shared = new SharedFileReads({ maxBytes: 1024, keepMs: 10_000, ...options, now: time.now });
  return { shared, time };
}

describe('SharedFileReads', () => {
  // Guarantee: fetches arriving while a read is in flight get its file.
  it('shares a read in flight', async () => {
    const { shared } = reads();
    expect(shared.inFlight(token())).toBeUndefined();
    const settle = shared.start(token());
    const waiting = shared.inFlight(token());
    const read = file(10);
    settle(read);
    expect(await waiting).toBe(read);
  });

  // Guarantee: a file read whole answers the fetches of its URL for keepMs after the read (the
  // other networks of a post), then no more: the next fetch reads again.
  it('keeps a file read whole for a while', async () => {
    const { shared, time } = reads();
    const read = file(10);
    shared.start(token())(read);
    expect(shared.inFlight(token())).toBeUndefined();
    time.pass(9_999);
    expect(shared.keptFile(token())).toBe(read);
    time.pass(1);
    expect(shared.keptFile(token())).toBeUndefined();
  });

  // Guarantee: a kept file is never served past its URL's expiry, and nothing is kept when keepMs is 0.
  it('keeps nothing past the URL expiry, or with keepMs 0', () => {
    const { shared, time } = reads();
    shared.start(token())(file(10, '2026-12-01T00:00:05.000Z'));
    time.pass(5_000);
    expect(shared.keptFile(token())).toBeUndefined();
    const none = reads({ keepMs: 0 }).shared;
    none.start(token())(file(10));
    expect(none.keptFile(token())).toBeUndefined();
  });

  // Guarantee: a media's deletion drops its kept files (every variant) and no other media's; a read
  // that began before the deletion is shared with its waiting fetches but not kept.
  it('forgets a deleted media', async () => {
    const { shared } = reads();
    const other = 'med_9999999999999999999999999';
    shared.start(token())(file(10));
    shared.start(token(MEDIA, 'jpeg'))(file(10));
    shared.start(token(other))(file(10));
    const before = shared.start(`${token()}x`);
    shared.forgetMedia(MEDIA);
    expect(shared.keptFile(token())).toBeUndefined();
    expect(shared.keptFile(token(MEDIA, 'jpeg'))).toBeUndefined();
    expect(shared.keptFile(token(other))).toBeDefined();
    const waiting = shared.inFlight(`${token()}x`);
    before(file(10));
    expect(await waiting).toBeDefined();
    expect(shared.keptFile(`${token()}x`)).toBeUndefined();
  });

  // Guarantee: a read that shares nothing (a large file streamed, a failure) lets the waiting
  // fetches read for themselves and keeps nothing; settling twice changes nothing.
  it('tells waiting fetches when there is nothing to share', async () => {
    const { shared } = reads();
    const settle = shared.start(token());
    const waiting = shared.inFlight(token());
    settle(undefined);
    settle(file(10));
    expect(await waiting).toBeUndefined();
    expect(shared.keptFile(token())).toBeUndefined();
  });

  // Guarantee: whole reads are bounded per file (a 16th of the budget) and in all; memory given
  // back makes room again.
  it('bounds the memory of whole reads', () => {
    const { shared } = reads({ maxBytes: 1600 });
    expect(shared.reserve(101)).toBe(false);
    for (let i = 0; i < 16; i++) expect(shared.reserve(100)).toBe(true);
    expect(shared.reserve(1)).toBe(false);
    shared.release(100);
    expect(shared.reserve(100)).toBe(true);
    expect(reads({ maxBytes: 0 }).shared.reserve(1)).toBe(false);
  });

  // Guarantee: a read whose size is not known yet reserves as much as a file read whole may take,
  // within three quarters of the budget; none when less than a chunk (64 KiB) is left there, so
  // that file streams; the last quarter stays for reads of known size (a burst of reads of
  // unknown size cannot leave a small file to stream unshared).
  it('reserves for a file of unknown size within three quarters of the budget', () => {
    const mib = 1024 * 1024;
    const { shared } = reads({ maxBytes: 16 * mib });
    for (let i = 0; i < 12; i++) expect(shared.reserveUpTo()).toBe(mib);
    expect(shared.reserveUpTo()).toBe(0);
    for (let i = 0; i < 4; i++) expect(shared.reserve(mib)).toBe(true);
    expect(shared.reserve(1)).toBe(false);
    shared.release(4 * mib);
    shared.release(mib - 100);
    expect(shared.reserveUpTo()).toBe(mib - 100);
    shared.release(64 * 1024 - 1);
    expect(shared.reserveUpTo()).toBe(0);
    shared.release(1);
    expect(shared.reserveUpTo()).toBe(64 * 1024);
  });

  // Guarantee: kept files are bounded by the budget too, the least recently used going first.
  it('bounds the memory of kept files', async () => {
    const { shared } = reads({ maxBytes: 1600 });
    for (let i = 0; i < 17; i++) shared.start(token(`med_${String(i).padStart(25, '0')}`))(file(100));
    expect(shared.keptFile(token(`med_${'0'.repeat(25)}`))).toBeUndefined();
    expect(shared.keptFile(token(`med_${String(16).padStart(25, '0')}`))).toBeDefined();
  });
});
