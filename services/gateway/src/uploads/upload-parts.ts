import type { MediaUpload } from '@svc/contracts';
import type { PublishingClient } from '../clients.ts';

/**
 * The size of the parts a file crosses to publishing in: all an upload holds in this process at
 * once, whatever the file's size.
 */
const PART_BYTES = 1024 * 1024;
/** One part's call. */
const PART_DEADLINE_MS = 30_000;
/**
 * The call of the part that completes a file: publishing then reads it (a video's structure, an
 * image's pixels) and makes its media, bounded by its probe timeout.
 */
export const COMPLETING_DEADLINE_MS = 120_000;

export interface UploadTarget {
  caller: { partnerId: string; workspaceId: string };
  uploadId: string;
  /** Where the first part goes: the upload's offset so far. */
  offset: number;
  /** The upload's length when known: the part that reaches it waits for the media. */
  length: number | null;
}

/**
 * Sends a body to publishing as the parts of an upload, in order, each appended before the next
 * is read (the body is read only as fast as publishing stores it). `seen` is told of every chunk
 * (a digest). With `keepOnBreak`, a body that breaks off (the client's connection dropped) still
 * has what arrived appended, so a resumable upload resumes from there. Answers the upload as the last append left
 * it (undefined when the body was empty) and the offset reached.
 */
export async function sendParts(
  publishing: PublishingClient,
  target: UploadTarget,
  body: AsyncIterable<Uint8Array>,
  options: { seen?: (chunk: Uint8Array) => void; keepOnBreak?: boolean } = {},
): Promise<{ upload: MediaUpload | undefined; offset: number }> {
  let offset = target.offset;
  let upload: MediaUpload | undefined;
  let pending: Uint8Array[] = [];
  let pendingBytes = 0;
  const flush = async () => {
    const chunk = Buffer.concat(pending, pendingBytes);
    pending = [];
    pendingBytes = 0;
    const completes = target.length !== null && offset + chunk.length === target.length;
    const answer = await publishing.appendUpload(
      { caller: target.caller, uploadId: target.uploadId, offset: BigInt(offset), chunk },
      { deadlineMs: completes ? COMPLETING_DEADLINE_MS : PART_DEADLINE_MS },
    );
    upload = answer.upload;
    offset += chunk.length;
  };
  try {
    for await (const chunk of body) {
      options.seen?.(chunk);
      pending.push(chunk);
      pendingBytes += chunk.length;
      if (pendingBytes >= PART_BYTES) await flush();
    }
  } catch (error) {
    if (options.keepOnBreak && pendingBytes > 0) await flush().catch(() => {});
    throw error;
  }
  if (pendingBytes > 0) await flush();
  return { upload, offset };
}
