import { callerOf, type PublishingService, type ServiceImplementation } from '@svc/contracts';
import { type MediaLibrary, viewOfMedia } from './media-library.ts';

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
    async readMediaFile(req) {
      const file = await library.readSignedFile(req.token);
      return { mime: file.mime, data: file.data, expiresAt: file.expiresAt.toISOString() };
    },
  };
}
