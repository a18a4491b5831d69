/**
 * Where media bytes live. A local volume by default; an S3-compatible store implements the same
 * three calls. Keys are opaque to callers (the media id plus a variant suffix).
 */
export interface MediaStorage {
  put(key: string, data: Buffer): Promise<void>;
  /** The bytes, or null when the key holds nothing. */
  get(key: string): Promise<Buffer | null>;
  /** Idempotent: deleting a missing key is not an error. */
  delete(key: string): Promise<void>;
}
