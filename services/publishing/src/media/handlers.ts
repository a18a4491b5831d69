import { callerOf, type PublishingService, type ServiceImplementation } from '@svc/contracts';
import { type MediaLibrary, viewOfMedia } from './media-library.ts';

/** The size of a file's messages: small enough that a stream holds little, large enough to be cheap. */
const MEDIA_CHUNK_BYTES = 64 * 1024;

type MediaMethods =
  | 'createMedia'
  | 'getMedia'
  | 'listMedia'
  | 'deleteMedia'
  | 'readMediaFile'
  | 'getMediaUrl';

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
      return { url, mime: req.network === 'photo_network' ? 'image/jpeg' : media.mime };
    },
    /** The head (a bad token fails before it), then the bytes as storage streams them. */
    async *readMediaFile(req) {
      const file = await library.openSignedFile(req.token);
      try {
        const head = { mime: file.mime, size: BigInt(file.size), expiresAt: file.expiresAt.toISOString() };
        yield { part: { case: 'head', value: head } };
        for await (const chunk of chunksOf(file.body, MEDIA_CHUNK_BYTES))
          yield { part: { case: 'chunk', value: chunk } };
      } finally {
        // Stopped early (the client hung up, an error): the file is closed, not read for nobody.
        file.body.destroy();
      }
    },
  };
}

/** A stream's buffers, none longer than `size` (storage may hand over larger ones). */
async function* chunksOf(body: AsyncIterable<Buffer>, size: number): AsyncGenerator<Buffer> {
  for await (const buffer of body)
    for (let at = 0; at < buffer.length; at += size) yield buffer.subarray(at, at + size);
}
