import { Readable } from 'node:stream';
import {
  DeleteObjectCommand,
  GetObjectCommand,
  NoSuchKey,
  PutObjectCommand,
  S3Client,
} from '@aws-sdk/client-s3';
import { checkStorageKey, type MediaStorage, type StoredFile } from './storage.ts';

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
 */
export class S3MediaStorage implements MediaStorage {
  private readonly client: S3Client;

  constructor(private readonly settings: S3Settings) {
    const { endpoint, region, accessKeyId, secretAccessKey } = settings;
    this.client = new S3Client({
      region,
      ...(endpoint ? { endpoint, forcePathStyle: true } : {}),
      ...(accessKeyId ? { credentials: { accessKeyId, secretAccessKey } } : {}),
    });
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

  /** The object's body as the SDK streams it from the server, with its Content-Length. */
  async open(key: string): Promise<StoredFile | null> {
    try {
      const object = await this.client.send(
        new GetObjectCommand({ Bucket: this.settings.bucket, Key: checkStorageKey(key) }),
      );
      const body = object.Body ?? Readable.from([]);
      // In Node the SDK's body is the HTTP response itself; its length is the object's.
      if (!(body instanceof Readable)) throw new Error(`S3 answered object ${key} with no readable body`);
      if (object.ContentLength === undefined) {
        body.destroy();
        throw new Error(`S3 answered object ${key} without its length`);
      }
      return { size: object.ContentLength, body };
    } catch (error) {
      if (error instanceof NoSuchKey) return null;
      throw error;
    }
  }

  /** S3 answers a delete of a missing key as a success: idempotent as the interface asks. */
  async delete(key: string): Promise<void> {
    await this.client.send(
      new DeleteObjectCommand({ Bucket: this.settings.bucket, Key: checkStorageKey(key) }),
    );
  }

  close(): void {
    this.client.destroy();
  }
}
