import type { Caller } from '@svc/db';
import { ServiceError } from '@svc/errors';
import type { PublishingContext } from '../context.ts';

/** Instagram's publishing limit: 100 posts per account per rolling 24 h, a carousel counting as one. */
export const DAILY_PHOTO_LIMIT = 100;
const WINDOW_MS = 24 * 3_600_000;

/** Posts this account published in the window, oldest first (the first to free a slot). */
async function publishedInWindow(ctx: PublishingContext, accountId: string): Promise<Date[]> {
  const rows = await ctx.db.postTarget.findMany({
    where: { accountId, status: 'published', publishedAt: { gt: new Date(ctx.now().getTime() - WINDOW_MS) } },
    select: { publishedAt: true },
    orderBy: { publishedAt: 'asc' },
  });
  return rows.flatMap((r) => (r.publishedAt ? [r.publishedAt] : []));
}

export async function usedToday(ctx: PublishingContext, accountId: string): Promise<number> {
  return (await publishedInWindow(ctx, accountId)).length;
}

export async function publishingLimit(ctx: PublishingContext, caller: Caller, accountId: string) {
  const { account } = await ctx.accounts.getAccount({ caller, accountId });
  if (account?.network !== 'photo_network')
    throw new ServiceError('unsupported', 'the publishing limit applies to photo_network accounts only');
  const published = await publishedInWindow(ctx, accountId);
  const used = published.length;
  const oldest = published[used - DAILY_PHOTO_LIMIT];
  return {
    limit: DAILY_PHOTO_LIMIT,
    used,
    remaining: Math.max(0, DAILY_PHOTO_LIMIT - used),
    windowHours: 24,
    nextSlotAt:
      used >= DAILY_PHOTO_LIMIT && oldest ? new Date(oldest.getTime() + WINDOW_MS).toISOString() : '',
  };
}
