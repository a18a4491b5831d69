import type { PublishingService, ServiceImplementation } from '@svc/contracts';
import type { PublishingContext } from './context.ts';
import { mediaHandlers } from './media/handlers.ts';
import { postHandlers } from './posts/handlers.ts';

export function publishingHandlers(ctx: PublishingContext): ServiceImplementation<typeof PublishingService> {
  return { ...mediaHandlers(ctx), ...postHandlers(ctx) };
}
