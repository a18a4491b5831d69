import { errors } from '@svc/errors';
import type { PublishingConfig } from '../config.ts';
import { hasImageSignature } from './detect.ts';
import { openMediaUrl } from './fetch-url.ts';
import type { MediaFiles } from './media-files.ts';

type SourceConfig = Pick<
  PublishingConfig,
  | 'MEDIA_MAX_BYTES'
  | 'MEDIA_VIDEO_MAX_BYTES'
  | 'ALLOW_PRIVATE_NETWORKS'
  | 'MEDIA_FETCH_TIMEOUT_MS'
  | 'MEDIA_FETCH_TRANSFER_TIMEOUT_MS'
>;

/** The size of the parts a stream is staged in: little memory per stream, few objects per file. */
const STAGED_PART_BYTES = 1024 * 1024;

/**
 * Stages a stream of chunks (a file fetched by URL) under `key`, in parts of STAGED_PART_BYTES:
 * at most one part is held at once. The limit is chosen from the file's first part (an image's
 * is lower than a video's) and the stream is abandoned as soon as it passes it. Answers the
 * file's length.
 */
async function stageStream(
  staging: MediaFiles['staging'],
  key: string,
  chunks: AsyncIterable<Uint8Array> | Iterable<Uint8Array>,
  limits: { field: 'file' | 'url'; maxBytesFor: (head: Uint8Array) => number },
): Promise<number> {
  let pending: Buffer[] = [];
  let pendingBytes = 0;
  let written = 0;
  let maxBytes = Number.POSITIVE_INFINITY;
  const flush = async () => {
    const part = Buffer.concat(pending, pendingBytes);
    if (written === 0) maxBytes = limits.maxBytesFor(part);
    if (written + part.length > maxBytes) throw errors.fileTooLarge(limits.field, maxBytes);
    await staging.writePart(key, written, part);
    written += part.length;
    pending = [];
    pendingBytes = 0;
  };
  for await (const chunk of chunks) {
    pending.push(Buffer.from(chunk.buffer, chunk.byteOffset, chunk.byteLength));
    pendingBytes += chunk.byteLength;
    if (written + pendingBytes > maxBytes) throw errors.fileTooLarge(limits.field, maxBytes);
    if (pendingBytes >= STAGED_PART_BYTES) await flush();
  }
  if (pendingBytes > 0 || written === 0) await flush();
  return written;
}

/**
 * Stages a file sent whole (`data`) or the body fetched from `url` under `key`, held to the image
 * limit once its first bytes show an image and to the video limit otherwise; answers its length.
 */
export async function stageInput(
  staging: MediaFiles['staging'],
  key: string,
  input: { data: Uint8Array; url: string },
  config: SourceConfig,
): Promise<number> {
  const maxBytesFor = (head: Uint8Array) =>
    hasImageSignature(head) ? config.MEDIA_MAX_BYTES : config.MEDIA_VIDEO_MAX_BYTES;
  if (!input.url) return stageStream(staging, key, [input.data], { field: 'file', maxBytesFor });
  const download = await openMediaUrl(input.url, {
    allowPrivateNetworks: config.ALLOW_PRIVATE_NETWORKS,
    timeoutMs: config.MEDIA_FETCH_TIMEOUT_MS,
    transferTimeoutMs: config.MEDIA_FETCH_TRANSFER_TIMEOUT_MS,
    maxBytes: config.MEDIA_VIDEO_MAX_BYTES,
  });
  return stageStream(staging, key, download.body, { field: 'url', maxBytesFor });
}
