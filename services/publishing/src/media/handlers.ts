import { callerOf, type PublishingService, type ServiceImplementation } from '@svc/contracts';
import type { PublishingContext } from '../context.ts';
import { createMedia, deleteMedia, getMedia, listMedia, readMediaFile, toMediaMessage } from './media.ts';

type MediaMethods = 'createMedia' | 'getMedia' | 'listMedia' | 'deleteMedia' | 'readMediaFile';

export function mediaHandlers(
  ctx: PublishingContext,
): Pick<ServiceImplementation<typeof PublishingService>, MediaMethods> {
  return {
    async createMedia(req) {
      const media = await createMedia(ctx, callerOf(req.caller), {
        workspaceId: req.workspaceId,
        data: req.data,
        url: req.url,
      });
      return { media: toMediaMessage(media) };
    },
    async getMedia(req) {
      return { media: toMediaMessage(await getMedia(ctx.db, callerOf(req.caller), req.mediaId)) };
    },
    async listMedia(req) {
      const { media, total } = await listMedia(ctx, callerOf(req.caller), req);
      return { media: media.map(toMediaMessage), total };
    },
    async deleteMedia(req) {
      await deleteMedia(ctx, callerOf(req.caller), req.mediaId);
      return {};
    },
    async readMediaFile(req) {
      const file = await readMediaFile(ctx, req.token);
      return { mime: file.mime, data: file.data, expiresAt: file.expiresAt.toISOString() };
    },
  };
}
