import type { PublishingService, ServiceImplementation } from '@svc/contracts';
import { mediaHandlers } from './media/handlers.ts';
import type { MediaLibrary } from './media/media-library.ts';
import { type PostHandlerDeps, postHandlers } from './posts/handlers.ts';

export function publishingHandlers(
  deps: PostHandlerDeps & { media: MediaLibrary },
): ServiceImplementation<typeof PublishingService> {
  return { ...mediaHandlers(deps.media), ...postHandlers(deps) };
}
