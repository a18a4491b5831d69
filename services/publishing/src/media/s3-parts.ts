import { Readable } from 'node:stream';
import {
  DeleteObjectCommand,
  GetObjectCommand,
  ListObjectsV2Command,
  PutObjectCommand,
  type S3Client,
} from '@aws-sdk/client-s3';

/** Deletes sent at once when dropping a staged file's parts. */
const DELETES_AT_ONCE = 16;

/**
 * A staged upload in a bucket: S3 objects cannot be appended to, so each part is its own object,
 * `<upload key>.<offset, 12 digits>`. Reading follows the chain from offset 0 (the part at 0, then
 * the one where it ends...), so a part left by a failed try at an offset the chain no longer
 * passes through is ignored, and one written again at the same offset replaces the old.
 */
export class S3Parts {
  constructor(
    private readonly client: S3Client,
    private readonly bucket: string,
  ) {}

  async write(key: string, offset: number, data: Buffer): Promise<void> {
    await this.client.send(
      new PutObjectCommand({ Bucket: this.bucket, Key: partKey(key, offset), Body: data }),
    );
  }

  /** Bytes `from` to `to` (exclusive), part by part, each asked of S3 as a range of its object. */
  async *read(key: string, from: number, to: number): AsyncGenerator<Buffer> {
    if (to <= from) return;
    const sizes = await this.list(key);
    for (let at = 0; at < to; ) {
      const size = sizes.get(at);
      if (!size) throw new Error(`staged upload ${key} has no part at offset ${at}`);
      const first = Math.max(from, at);
      const last = Math.min(to, at + size);
      if (first < last) yield* await this.bytes(partKey(key, at), first - at, last - at);
      at += size;
    }
  }

  async discard(key: string): Promise<void> {
    const keys = [...(await this.list(key)).keys()].map((offset) => partKey(key, offset));
    for (let i = 0; i < keys.length; i += DELETES_AT_ONCE)
      await Promise.all(
        keys
          .slice(i, i + DELETES_AT_ONCE)
          .map((part) => this.client.send(new DeleteObjectCommand({ Bucket: this.bucket, Key: part }))),
      );
  }

  /** The staged parts: their offset and size. */
  private async list(key: string): Promise<Map<number, number>> {
    const sizes = new Map<number, number>();
    const prefix = `${key}.`;
    let token: string | undefined;
    do {
      const page = await this.client.send(
        new ListObjectsV2Command({ Bucket: this.bucket, Prefix: prefix, ContinuationToken: token }),
      );
      for (const object of page.Contents ?? []) {
        const offset = Number(object.Key?.slice(prefix.length));
        if (Number.isInteger(offset) && object.Size) sizes.set(offset, object.Size);
      }
      token = page.IsTruncated ? page.NextContinuationToken : undefined;
    } while (token);
    return sizes;
  }

  private async bytes(key: string, start: number, end: number): Promise<Readable> {
    const object = await this.client.send(
      new GetObjectCommand({ Bucket: this.bucket, Key: key, Range: `bytes=${start}-${end - 1}` }),
    );
    if (!(object.Body instanceof Readable)) throw new Error(`S3 answered part ${key} with no readable body`);
    return object.Body;
  }
}

function partKey(key: string, offset: number): string {
  return `${key}.${String(offset).padStart(12, '0')}`;
}
