import { Readable } from 'node:stream';
import {
  DeleteObjectCommand,
  GetObjectCommand,
  HeadObjectCommand,
  NoSuchKey,
  NotFound,
  PutObjectCommand,
  S3Client,
  S3ServiceException,
} from '@aws-sdk/client-s3';
import { getSignedUrl } from '@aws-sdk/s3-request-presigner';
import { S3Parts } from './s3-parts.ts';
import {
  type ByteRange,
  checkStorageKey,
  type MediaStorage,
  readAll,
  resolveRange,
  type StoredFile,
  type WholeRead,
} from './storage.ts';

export interface S3Settings {
  bucket: string;
  region: string;
  /** An S3-compatible server (MinIO, R2...); empty for AWS itself. */
  endpoint: string;
  /** Empty: the SDK's own chain (a pod's IAM role, instance profile...). */
  accessKeyId: string;
  secretAccessKey: string;
}

/**
 * Media in an S3-compatible bucket, one object per key, so every replica of the API and of the
 * workers reads what any of them wrote. A PUT replaces an object whole (a reader never sees half
 * of one), which keeps the local volume's promise for two workers converting the same media.
 * An object cannot be appended to, so a staged upload is one object per part (see S3Parts).
 */
export class S3MediaStorage implements MediaStorage {
  private readonly client: S3Client;
  private readonly parts: S3Parts;

  constructor(private readonly settings: S3Settings) {
    const { endpoint, region, accessKeyId, secretAccessKey } = settings;
    this.client = new S3Client({
      region,
      ...(endpoint ? { endpoint, forcePathStyle: true } : {}),
      ...(accessKeyId ? { credentials: { accessKeyId, secretAccessKey } } : {}),
      // Checksums only where S3 demands them: a streamed body is then sent with its length, as
      // every S3-compatible server takes it (a trailing checksum needs aws-chunked encoding).
      requestChecksumCalculation: 'WHEN_REQUIRED',
    });
    this.parts = new S3Parts(this.client, settings.bucket);
  }

  async put(key: string, data: Buffer): Promise<void> {
    await this.client.send(
      new PutObjectCommand({ Bucket: this.settings.bucket, Key: checkStorageKey(key), Body: data }),
    );
  }

  async get(key: string): Promise<Buffer | null> {
    try {
      const object = await this.client.send(
        new GetObjectCommand({ Bucket: this.settings.bucket, Key: checkStorageKey(key) }),
      );
      return object.Body ? Buffer.from(await object.Body.transformToByteArray()) : Buffer.alloc(0);
    } catch (error) {
      if (error instanceof NoSuchKey) return null;
      throw error;
    }
  }

  /**
   * The object's body as the SDK streams it from the server, with its length. A range is asked of
   * S3 itself; a suffix (the last n bytes) is turned into offsets first, from the object's size,
   * as not every S3-compatible server reads `bytes=-n` right. A range past the end is S3's 416,
   * answered as an empty part.
   */
  async open(key: string, requested?: ByteRange): Promise<StoredFile | null> {
    if (requested?.length === 0) return this.emptyPart(key);
    let range = requested;
    if (range && range.offset < 0) {
      const size = await this.sizeOf(key);
      if (size === null) return null;
      if (size === 0) return this.emptyPart(key);
      range = { offset: Math.max(0, size + range.offset) };
    }
    try {
      const object = await this.client.send(
        new GetObjectCommand({
          Bucket: this.settings.bucket,
          Key: checkStorageKey(key),
          ...(range ? { Range: rangeHeader(range) } : {}),
        }),
      );
      const body = object.Body ?? Readable.from([]);
      // In Node the SDK's body is the HTTP response itself.
      if (!(body instanceof Readable)) throw new Error(`S3 answered object ${key} with no readable body`);
      const part = partOf(object, range);
      if (!part) {
        body.destroy();
        throw new Error(`S3 answered object ${key} without its length`);
      }
      return { ...part, body };
    } catch (error) {
      if (error instanceof NoSuchKey) return null;
      if (range && isInvalidRange(error)) return this.emptyPart(key);
      throw error;
    }
  }

  /** S3 answers a delete of a missing key as a success: idempotent as the interface asks. */
  async delete(key: string): Promise<void> {
    await this.client.send(
      new DeleteObjectCommand({ Bucket: this.settings.bucket, Key: checkStorageKey(key) }),
    );
  }

  /**
   * A presigned GET of the object: signed here with the storage's credentials, it needs none
   * from whoever fetches it, and S3 answers it with `contentType` whatever the object was stored
   * with. It carries no secret: the access key's id and a signature of this one GET (and with a
   * role, its session token, which signs nothing without the secret key). Deleting the object
   * makes it answer 404 at once. Signed with a pod's temporary
   * credentials (an IAM role) it stops working when they expire, which the SDK keeps minutes
   * away by renewing them; that is enough, as a URL is made when its target is sent and Meta
   * fetches the file while it creates the post or container.
   */
  directUrl(key: string, contentType: string, expiresInSeconds: number): Promise<string> {
    const get = new GetObjectCommand({
      Bucket: this.settings.bucket,
      Key: checkStorageKey(key),
      ResponseContentType: contentType,
    });
    return getSignedUrl(this.client, get, { expiresIn: expiresInSeconds });
  }

  writePart(key: string, offset: number, data: Buffer): Promise<void> {
    return this.parts.write(checkStorageKey(key), offset, data);
  }

  readStaged(key: string, from: number, to: number): AsyncIterable<Buffer> {
    return this.parts.read(checkStorageKey(key), from, to);
  }

  /**
   * The parts, read in order, are streamed into one PUT of the target with its length (publishing
   * holds one chunk at a time), then dropped. Done before when the target already has the length.
   */
  async commitStaged(key: string, length: number, target: string): Promise<void> {
    const existing = await this.sizeOf(target);
    if (existing !== length) {
      await this.client.send(
        new PutObjectCommand({
          Bucket: this.settings.bucket,
          Key: checkStorageKey(target),
          Body: Readable.from(this.readStaged(key, 0, length)),
          ContentLength: length,
        }),
      );
    }
    await this.discardStaged(key);
  }

  discardStaged(key: string): Promise<void> {
    return this.parts.discard(checkStorageKey(key));
  }

  close(): void {
    this.client.destroy();
  }

  /** One GET of at most `maxBytes` from the start: whole when the object is no larger. */
  async readWhole(key: string, maxBytes: number): Promise<WholeRead | null> {
    const file = await this.open(key, { offset: 0, length: maxBytes });
    if (!file) return null;
    if (file.size > maxBytes) {
      file.body.destroy();
      return { size: file.size };
    }
    return { size: file.size, bytes: await readAll(file.body, file.size) };
  }

  private async emptyPart(key: string): Promise<StoredFile | null> {
    const size = await this.sizeOf(key);
    if (size === null) return null;
    return { size, offset: size, length: 0, body: Readable.from([]) };
  }

  private async sizeOf(key: string): Promise<number | null> {
    try {
      const head = await this.client.send(
        new HeadObjectCommand({ Bucket: this.settings.bucket, Key: checkStorageKey(key) }),
      );
      return head.ContentLength ?? null;
    } catch (error) {
      if (error instanceof NotFound || error instanceof NoSuchKey) return null;
      throw error;
    }
  }
}

function rangeHeader(range: ByteRange): string {
  if (range.length === undefined) return `bytes=${range.offset}-`;
  return `bytes=${range.offset}-${range.offset + Math.max(range.length, 1) - 1}`;
}

/** Where the answered bytes sit in the object, from Content-Range (a range) or Content-Length. */
function partOf(
  object: { ContentLength?: number; ContentRange?: string },
  range: ByteRange | undefined,
): Omit<StoredFile, 'body'> | null {
  if (object.ContentLength === undefined) return null;
  if (!range) return { size: object.ContentLength, offset: 0, length: object.ContentLength };
  const match = /^bytes (\d+)-(\d+)\/(\d+)$/.exec(object.ContentRange ?? '');
  if (!match) return null;
  const size = Number(match[3]);
  const { start, end } = resolveRange(size, range);
  if (start !== Number(match[1])) return null;
  return { size, offset: start, length: end - start };
}

function isInvalidRange(error: unknown): boolean {
  return error instanceof S3ServiceException && error.$metadata.httpStatusCode === 416;
}
