import type { Readable } from 'node:stream';

/**
 * Where media bytes live. A local volume by default; an S3-compatible store implements the same
 * calls. Keys are opaque to callers (the media id plus a variant suffix, or an upload's id).
 *
 * Files arriving in parts are staged under their upload's key: each part is written at its
 * offset (a part written again replaces what was there, so a retried part after a crash is
 * harmless), the staged bytes can be read back, and committing moves the first `length` of them
 * to the media's key. The upload's row, not storage, says how many bytes are good.
 */
export interface MediaStorage {
  put(key: string, data: Buffer): Promise<void>;
  /** The bytes, or null when the key holds nothing. */
  get(key: string): Promise<Buffer | null>;
  /**
   * The bytes (or the `range` of them) as a stream, for sending a file without holding it whole,
   * with the file's length; null when the key holds nothing. The caller reads the body to its
   * end or destroys it.
   */
  open(key: string, range?: ByteRange): Promise<StoredFile | null>;
  /**
   * The whole file in one buffer when it is at most `maxBytes` (a photo sent in one message),
   * else its size alone; null when the key holds nothing.
   */
  readWhole(key: string, maxBytes: number): Promise<WholeRead | null>;
  /** Idempotent: deleting a missing key is not an error. */
  delete(key: string): Promise<void>;
  /**
   * A URL the storage itself serves the file at, answered with `contentType`, until
   * `expiresInSeconds` from now (MEDIA_URLS=storage). Only a bucket has one; a local folder
   * serves nothing of its own.
   */
  directUrl?(key: string, contentType: string, expiresInSeconds: number): Promise<string>;

  /** Writes one part of a staged file at `offset`. */
  writePart(key: string, offset: number, data: Buffer): Promise<void>;
  /** Bytes `from` to `to` (exclusive) of a staged file, as written; fails when a part is missing. */
  readStaged(key: string, from: number, to: number): AsyncIterable<Buffer>;
  /**
   * Makes the first `length` staged bytes the file under `target` and drops the staging.
   * Idempotent: once done, doing it again (a retried completion) finds the target and succeeds.
   */
  commitStaged(key: string, length: number, target: string): Promise<void>;
  /** Drops a staged file, whatever of it exists. */
  discardStaged(key: string): Promise<void>;
}

/** Part of a file: from `offset` (negative: that many bytes before the end), `length` bytes at most. */
export interface ByteRange {
  offset: number;
  /** To the end when absent. */
  length?: number;
}

export interface StoredFile {
  /** The whole file's length. */
  size: number;
  /** The part `body` carries: `length` bytes from `offset` (the whole file without a range). */
  offset: number;
  length: number;
  body: Readable;
}

/** A file read whole: its size, and its bytes when it was small enough to read. */
export interface WholeRead {
  size: number;
  bytes?: Buffer;
}

/** A stream read into one buffer: exactly `size` bytes, or an error (the file changed under the reader). */
export async function readAll(body: AsyncIterable<Buffer>, size: number): Promise<Buffer> {
  const bytes = Buffer.allocUnsafe(size);
  let read = 0;
  for await (const buffer of body) {
    if (read + buffer.length > size) throw new Error(`the file has more than the ${size} bytes announced`);
    buffer.copy(bytes, read);
    read += buffer.length;
  }
  if (read !== size) throw new Error(`the file ended after ${read} of the ${size} bytes announced`);
  return bytes;
}

/**
 * The first and last-plus-one byte of a range in a file of `size` bytes; a range that starts at
 * or past the end is empty (an HTTP 416), whatever its length.
 */
export function resolveRange(size: number, range: ByteRange | undefined): { start: number; end: number } {
  if (!range) return { start: 0, end: size };
  const start = range.offset < 0 ? Math.max(0, size + range.offset) : range.offset;
  if (start >= size || range.length === 0) return { start: size, end: size };
  const end = range.length === undefined ? size : Math.min(size, start + range.length);
  return { start, end };
}

/** Keys are media or upload ids plus a suffix: nothing that could climb out of a folder or bucket prefix. */
const KEY_PATTERN = /^[A-Za-z0-9_-]+(\.[A-Za-z0-9_-]+)?$/;

export function checkStorageKey(key: string): string {
  if (!KEY_PATTERN.test(key)) throw new Error(`invalid media storage key: ${JSON.stringify(key)}`);
  return key;
}
