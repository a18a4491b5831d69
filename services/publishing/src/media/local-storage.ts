import { randomBytes } from 'node:crypto';
import { mkdir, open, readFile, rename, rm, writeFile } from 'node:fs/promises';
import path from 'node:path';
import { checkStorageKey, type MediaStorage, type StoredFile } from './storage.ts';

/**
 * Media on a local volume: one file per key in `dir`. Writes go to a temporary name first and are
 * renamed into place, so a reader never sees half a file and two writers of the same key (two
 * workers converting the same media) simply leave one complete copy.
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
      if ((error as NodeJS.ErrnoException).code === 'ENOENT') return null;
      throw error;
    }
  }

  /**
   * Size and stream come from one open file: a writer renaming a new copy into place meanwhile
   * does not change what this reader sees. The stream reads 64 KiB at a time (Node's default).
   */
  async open(key: string): Promise<StoredFile | null> {
    try {
      const handle = await open(this.pathOf(key), 'r');
      try {
        const { size } = await handle.stat();
        return { size, body: handle.createReadStream() };
      } catch (error) {
        await handle.close();
        throw error;
      }
    } catch (error) {
      if ((error as NodeJS.ErrnoException).code === 'ENOENT') return null;
      throw error;
    }
  }

  async delete(key: string): Promise<void> {
    await rm(this.pathOf(key), { force: true });
  }

  private pathOf(key: string): string {
    return path.join(this.dir, checkStorageKey(key));
  }
}
