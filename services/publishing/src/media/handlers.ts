import { callerOf, type PublishingService, type ServiceImplementation } from '@svc/contracts';
import type { MediaLibrary, UploadState } from './media-library.ts';
import { viewOfMedia } from './media-view.ts';

/** The size of a file's messages: small enough that a stream holds little, large enough to be cheap. */
const MEDIA_CHUNK_BYTES = 64 * 1024;
/** The largest file answered whole, whatever a caller asks: a photo's size many times over. */
const WHOLE_FILE_MAX_BYTES = 16 * 1024 * 1024;

type MediaMethods =
  | 'createMedia'
  | 'getMedia'
  | 'listMedia'
  | 'deleteMedia'
  | 'readMediaFile'
  | 'readWholeMediaFile'
  | 'getMediaUrl'
  | 'startUpload'
  | 'appendUpload'
  | 'getUpload'
  | 'deleteUpload';

export function mediaHandlers(
  library: MediaLibrary,
): Pick<ServiceImplementation<typeof PublishingService>, MediaMethods> {
  return {
    async createMedia(req) {
      const input = { workspaceId: req.workspaceId, data: req.data, url: req.url };
      const media = await library.create(callerOf(req.caller), input);
      return { mediaJson: JSON.stringify(viewOfMedia(media)) };
    },
    async getMedia(req) {
      const media = await library.get(callerOf(req.caller), req.mediaId);
      return { mediaJson: JSON.stringify(viewOfMedia(media)) };
    },
    async listMedia(req) {
      const { media, total } = await library.list(callerOf(req.caller), req);
      return { mediaJson: media.map((m) => JSON.stringify(viewOfMedia(m))), total };
    },
    async deleteMedia(req) {
      await library.delete(callerOf(req.caller), req.mediaId);
      return {};
    },
    /** The URL a network fetches the media from, as for publishing (inbox's attachments). */
    async getMediaUrl(req) {
      const media = await library.get(callerOf(req.caller), req.mediaId);
      const url = await library.files.publishableUrl(media, req.network);
      const converted = req.network === 'photo_network' && media.kind === 'image';
      return { url, mime: converted ? 'image/jpeg' : media.mime };
    },
    /** The head (a bad token fails before it), then the bytes (of the range asked) as storage streams them. */
    async *readMediaFile(req) {
      const range = req.offset === undefined ? undefined : rangeOf(req.offset, req.length);
      const file = await library.signedFiles.open(req.token, range);
      try {
        const head = {
          mime: file.mime,
          size: BigInt(file.size),
          expiresAt: file.expiresAt.toISOString(),
          offset: BigInt(file.offset),
          length: BigInt(file.length),
        };
        yield { part: { case: 'head', value: head } };
        if (file.length === 0) return;
        for await (const chunk of chunksOf(file.body, MEDIA_CHUNK_BYTES))
          yield { part: { case: 'chunk', value: chunk } };
      } finally {
        // Stopped early (the client hung up, an error): the file is closed, not read for nobody.
        file.body.destroy();
      }
    },
    /** The file whole when it is at most `maxBytes`; else its head alone (the caller streams it). */
    async readWholeMediaFile(req) {
      const maxBytes = Math.min(Number(req.maxBytes), WHOLE_FILE_MAX_BYTES);
      const file = await library.signedFiles.read(req.token, maxBytes);
      const head = {
        mime: file.mime,
        size: BigInt(file.size),
        expiresAt: file.expiresAt.toISOString(),
        offset: 0n,
        length: file.bytes ? BigInt(file.size) : 0n,
      };
      return { head, data: file.bytes ?? new Uint8Array() };
    },
    async startUpload(req) {
      const upload = await library.startUpload(callerOf(req.caller), {
        workspaceId: req.workspaceId,
        length: req.length === undefined ? null : Number(req.length),
        filename: req.filename,
      });
      return { upload: uploadMessage({ upload, media: null }) };
    },
    async appendUpload(req) {
      const state = await library.appendUpload(callerOf(req.caller), {
        uploadId: req.uploadId,
        offset: Number(req.offset),
        chunk: req.chunk,
        last: req.last,
      });
      return { upload: uploadMessage(state) };
    },
    async getUpload(req) {
      return { upload: uploadMessage(await library.getUpload(callerOf(req.caller), req.uploadId)) };
    },
    async deleteUpload(req) {
      await library.deleteUpload(callerOf(req.caller), req.uploadId);
      return {};
    },
  };
}

/** An upload as its message carries it (with the media's public JSON once made). */
function uploadMessage({ upload, media }: UploadState) {
  return {
    id: upload.id,
    workspaceId: upload.workspaceId,
    offset: BigInt(upload.offset),
    ...(upload.length === null ? {} : { length: BigInt(upload.length) }),
    expiresAt: upload.expiresAt.toISOString(),
    mediaJson: media ? JSON.stringify(viewOfMedia(media)) : '',
    filename: upload.filename,
    maxBytes: BigInt(upload.maxBytes),
  };
}

function rangeOf(offset: bigint, length: bigint | undefined) {
  return { offset: Number(offset), ...(length === undefined ? {} : { length: Number(length) }) };
}

/** A stream's buffers, none longer than `size` (storage may hand over larger ones). */
async function* chunksOf(body: AsyncIterable<Buffer>, size: number): AsyncGenerator<Buffer> {
  for await (const buffer of body)
    for (let at = 0; at < buffer.length; at += size) yield buffer.subarray(at, at + size);
}
