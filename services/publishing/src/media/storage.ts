import type { Readable } from 'node:stream';

/**
 * Where media bytes live. A local volume by default; an S3-compatible store implements the same
 * calls. Keys are opaque to callers (the media id plus a variant suffix).
 */
export interface MediaStorage {
  put(key: string, data: Buffer): Promise<void>;
  /** The bytes, or null when the key holds nothing. */
  get(key: string): Promise<Buffer | null>;
  /**
   * The bytes as a stream, for sending a file without holding it whole, with their length; null
   * when the key holds nothing. The caller reads the body to its end or destroys it.
   */
  open(key: string): Promise<StoredFile | null>;
  /** Idempotent: deleting a missing key is not an error. */
  delete(key: string): Promise<void>;
}

export interface StoredFile {
  size: number;
  body: Readable;
}

/** Keys are media ids plus a variant suffix: nothing that could climb out of a folder or bucket prefix. */
const KEY_PATTERN = /^[A-Za-z0-9_-]+(\.[A-Za-z0-9_-]+)?$/;

export function checkStorageKey(key: string): string {
  if (!KEY_PATTERN.test(key)) throw new Error(`invalid media storage key: ${JSON.stringify(key)}`);
  return key;
}
