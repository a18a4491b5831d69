import type { Caller } from '@svc/db';
import { ServiceError } from '@svc/errors';
import type { PublishingContext } from '../context.ts';

/** Instagram's publishing limit: 100 posts per account per rolling 24 h, a carousel counting as one. */
export const DAILY_PHOTO_LIMIT = 100;
const WINDOW_MS = 24 * 3_600_000;

const PUBLISHED_IN_WINDOW = {
  name: 'publishing_published_in_window',
  text: `SELECT published_at FROM post_targets
          WHERE account_id = $1 AND status = 'published' AND published_at > $2
          ORDER BY published_at`,
};

/** Where the rolling window starts now. */
export const windowStart = (ctx: PublishingContext) => new Date(ctx.now().getTime() - WINDOW_MS);

/** Posts this account published in the window, oldest first (the first to free a slot). */
async function publishedInWindow(ctx: PublishingContext, accountId: string): Promise<Date[]> {
  const { rows } = await ctx.pool.query<{ published_at: Date }>({
    ...PUBLISHED_IN_WINDOW,
    values: [accountId, windowStart(ctx)],
  });
  return rows.map((r) => r.published_at);
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
