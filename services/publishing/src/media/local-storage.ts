import { randomBytes } from 'node:crypto';
import { constants, createReadStream } from 'node:fs';
import { mkdir, open, readFile, rename, rm, stat, truncate, writeFile } from 'node:fs/promises';
import path from 'node:path';
import {
  type ByteRange,
  checkStorageKey,
  type MediaStorage,
  resolveRange,
  type StoredFile,
  type WholeRead,
} from './storage.ts';

/**
 * Media on a local volume: one file per key in `dir`. Writes go to a temporary name first and are
 * renamed into place, so a reader never sees half a file and two writers of the same key (two
 * workers converting the same media) simply leave one complete copy. A staged upload is one file
 * under its upload's key, written part by part at each part's offset, and renamed to the media's
 * key when complete (a rename on one volume: no copy, however large the video).
 */
export class LocalMediaStorage implements MediaStorage {
  private readonly dir: string;

  constructor(dir: string) {
    this.dir = path.resolve(dir);
  }

  async put(key: string, data: Buffer): Promise<void> {
    await mkdir(this.dir, { recursive: true });
    const target = this.pathOf(key);
    const temporary = `${target}.${randomBytes(6).toString('hex')}.tmp`;
    try {
      await writeFile(temporary, data, { flag: 'wx' });
      await rename(temporary, target);
    } catch (error) {
      await rm(temporary, { force: true });
      throw error;
    }
  }

  async get(key: string): Promise<Buffer | null> {
    try {
      return await readFile(this.pathOf(key));
    } catch (error) {
      if (isMissing(error)) return null;
      throw error;
    }
  }

  /**
   * Size and stream come from one open file: a writer renaming a new copy into place meanwhile
   * does not change what this reader sees. The stream reads 64 KiB at a time (Node's default).
   */
  async open(key: string, range?: ByteRange): Promise<StoredFile | null> {
    try {
      const handle = await open(this.pathOf(key), 'r');
      try {
        const { size } = await handle.stat();
        const { start, end } = resolveRange(size, range);
        // `end` is inclusive in Node. An empty range starts at the end of the file: nothing is read.
        const body = handle.createReadStream({ start, end: Math.max(start, end - 1) });
        return { size, offset: start, length: end - start, body };
      } catch (error) {
        await handle.close();
        throw error;
      }
    } catch (error) {
      if (isMissing(error)) return null;
      throw error;
    }
  }

  /** The file's size and, when it is at most `maxBytes`, its bytes: one open, one stat, one buffer. */
  async readWhole(key: string, maxBytes: number): Promise<WholeRead | null> {
    try {
      const handle = await open(this.pathOf(key), 'r');
      try {
        const { size } = await handle.stat();
        if (size > maxBytes) return { size };
        const bytes = Buffer.allocUnsafe(size);
        for (let read = 0; read < size; ) {
          const { bytesRead } = await handle.read(bytes, read, size - read, read);
          if (bytesRead === 0) throw new Error(`media file ${key} ended after ${read} of its ${size} bytes`);
          read += bytesRead;
        }
        return { size, bytes };
      } finally {
        await handle.close();
      }
    } catch (error) {
      if (isMissing(error)) return null;
      throw error;
    }
  }

  async delete(key: string): Promise<void> {
    await rm(this.pathOf(key), { force: true });
  }

  async writePart(key: string, offset: number, data: Buffer): Promise<void> {
    await mkdir(this.dir, { recursive: true });
    // Not O_APPEND: the part goes at its offset, over whatever a failed earlier try left there.
    const handle = await open(this.pathOf(key), constants.O_WRONLY | constants.O_CREAT);
    try {
      let written = 0;
      while (written < data.length) {
        const { bytesWritten } = await handle.write(data, written, data.length - written, offset + written);
        written += bytesWritten;
      }
    } finally {
      await handle.close();
    }
  }

  async *readStaged(key: string, from: number, to: number): AsyncIterable<Buffer> {
    if (to <= from) return;
    const { size } = await stat(this.pathOf(key));
    if (size < to) throw new Error(`staged file ${key} has ${size} bytes, fewer than ${to}`);
    yield* createReadStream(this.pathOf(key), { start: from, end: to - 1 });
  }

  async commitStaged(key: string, length: number, target: string): Promise<void> {
    const staged = this.pathOf(key);
    try {
      // Bytes past `length` are a failed part's leftovers.
      await truncate(staged, length);
      await rename(staged, this.pathOf(target));
    } catch (error) {
      if (!isMissing(error)) throw error;
      // Committed before (a retried completion): the target holds the file.
      const done = await stat(this.pathOf(target)).catch(() => null);
      if (done?.size !== length) throw error;
    }
  }

  async discardStaged(key: string): Promise<void> {
    await this.delete(key);
  }

  private pathOf(key: string): string {
    return path.join(this.dir, checkStorageKey(key));
  }
}

function isMissing(error: unknown): boolean {
  return (error as NodeJS.ErrnoException).code === 'ENOENT';
}
