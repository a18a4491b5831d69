import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { LocalMediaStorage } from '../src/media/local-storage.ts';
import { S3MediaStorage } from '../src/media/s3-storage.ts';
import type { MediaStorage } from '../src/media/storage.ts';
import { type S3Server, startS3Server } from './s3-server.ts';

/**
 * The storage promises video relies on, kept by both drivers (a local folder, and an S3 bucket on
 * s3rver): a file staged part by part at each part's offset (a part written again replaces the
 * old), read back in any window, committed to the media's key once (a second commit, a retried
 * completion, finds it done), discarded whole; and ranges of a stored file, and a file read whole.
 */
let dir: string;
let s3: S3Server;
let s3Storage: S3MediaStorage;
const drivers: Record<string, () => MediaStorage> = {};

beforeAll(async () => {
  dir = await mkdtemp(path.join(tmpdir(), 'media-video-local-'));
  s3 = await startS3Server();
  s3Storage = new S3MediaStorage(s3.settings);
  drivers.local = () => new LocalMediaStorage(dir);
  drivers.s3 = () => s3Storage;
});
afterAll(async () => {
  s3Storage?.close();
  await s3?.close();
  await rm(dir, { recursive: true, force: true });
});

const bytesOf = (length: number, seed: number) =>
  Buffer.from(Array.from({ length }, (_, i) => (i * 7 + seed) % 256));

async function collect(chunks: AsyncIterable<Buffer>): Promise<Buffer> {
  const parts: Buffer[] = [];
  for await (const chunk of chunks) parts.push(chunk);
  return Buffer.concat(parts);
}

describe.each(['local', 's3'])('%s storage', (name) => {
  const storage = () => (drivers[name] as () => MediaStorage)();

  // Guarantee: parts written at their offsets read back as one file in any window; a part
  // written again at its offset (a retry after a failure) replaces the first try, shorter or not.
  it('stages a file part by part', async () => {
    const file = bytesOf(3000, 1);
    const key = `upl_${name}staged`;
    await storage().writePart(key, 0, bytesOf(1000, 9));
    await storage().writePart(key, 0, file.subarray(0, 1000));
    await storage().writePart(key, 1000, file.subarray(1000, 2500));
    await storage().writePart(key, 2500, file.subarray(2500));
    expect((await collect(storage().readStaged(key, 0, 3000))).equals(file)).toBe(true);
    expect((await collect(storage().readStaged(key, 900, 2600))).equals(file.subarray(900, 2600))).toBe(true);
    expect((await collect(storage().readStaged(key, 3000, 3000))).length).toBe(0);
  });

  // Guarantee: committing moves the staged bytes (its first `length`) to the media's key and
  // drops the staging; committing again succeeds without changing anything.
  it('commits once, and again harmlessly', async () => {
    const file = bytesOf(2048, 3);
    const key = `upl_${name}commit`;
    const target = `med_${name}commit`;
    await storage().writePart(key, 0, file.subarray(0, 1024));
    await storage().writePart(key, 1024, file.subarray(1024));
    await storage().commitStaged(key, file.length, target);
    expect((await storage().get(target))?.equals(file)).toBe(true);
    await expect(collect(storage().readStaged(key, 0, 10))).rejects.toThrow();
    await storage().commitStaged(key, file.length, target);
    expect((await storage().get(target))?.equals(file)).toBe(true);
  });

  // Guarantee: discarding drops every part of a staged file; discarding nothing is no error.
  it('discards a staged file', async () => {
    const key = `upl_${name}discard`;
    await storage().writePart(key, 0, bytesOf(100, 5));
    await storage().writePart(key, 100, bytesOf(100, 6));
    await storage().discardStaged(key);
    await expect(collect(storage().readStaged(key, 0, 200))).rejects.toThrow();
    await storage().discardStaged(key);
  });

  // Guarantee: a range of a stored file is exactly those bytes with the file's size; one past the
  // end is empty (the gateway's 416); a suffix counts from the end.
  it('opens ranges of a file', async () => {
    const file = bytesOf(5000, 7);
    const key = `med_${name}ranges`;
    await storage().put(key, file);
    for (const [range, start, end] of [
      [{ offset: 10, length: 90 }, 10, 100],
      [{ offset: 4990 }, 4990, 5000],
      [{ offset: -25 }, 4975, 5000],
      [{ offset: 4000, length: 5000 }, 4000, 5000],
    ] as const) {
      const opened = await storage().open(key, range);
      expect(opened).toMatchObject({ size: 5000, offset: start, length: end - start });
      const body = await collect(opened?.body ?? (async function* () {})());
      expect(body.equals(file.subarray(start, end)), JSON.stringify(range)).toBe(true);
    }
    const past = await storage().open(key, { offset: 5000 });
    expect(past).toMatchObject({ size: 5000, length: 0 });
    past?.body.destroy();
    expect(await storage().open(`med_${name}missing`, { offset: 0 })).toBeNull();
  });

  // Guarantee: a file read whole (a photo the gateway shares among a post's networks) is exactly
  // its bytes when it is at most the size asked, and its size alone when larger, also by a byte;
  // a missing key is null.
  it('reads a file whole up to a size', async () => {
    const file = bytesOf(70_000, 3);
    const key = `med_${name}whole`;
    await storage().put(key, file);
    for (const maxBytes of [70_000, 1_000_000]) {
      const whole = await storage().readWhole(key, maxBytes);
      expect(whole?.size).toBe(70_000);
      expect(whole?.bytes?.equals(file), `at most ${maxBytes}`).toBe(true);
    }
    for (const maxBytes of [69_999, 0])
      expect(await storage().readWhole(key, maxBytes)).toEqual({ size: 70_000 });
    // s3rver never answers a ranged GET of an empty object, where S3 answers 416 (read as empty
    // by the driver); media files are never empty, so only the local driver is asked here.
    if (name === 'local') {
      await storage().put(`med_${name}empty`, Buffer.alloc(0));
      const empty = await storage().readWhole(`med_${name}empty`, 100);
      expect(empty?.size).toBe(0);
      expect(empty?.bytes?.length).toBe(0);
    }
    expect(await storage().readWhole(`med_${name}missing`, 100)).toBeNull();
  });
});
