import type { PublishingLimitView } from '@svc/contracts/public';
import type { Caller } from '@svc/db';
import type { AccountsDirectory } from '@svc/directory';
import { errors, ServiceError } from '@svc/errors';
import type { PostStore } from './post-store.ts';

/** Instagram's publishing limit: 100 posts per account per rolling 24 h, a carousel counting as one. */
export const DAILY_PHOTO_LIMIT = 100;
const WINDOW_MS = 24 * 3_600_000;

/** Where the rolling window starts at `now`. */
export const windowStart = (now: Date) => new Date(now.getTime() - WINDOW_MS);

/** The account's limit as we count it: its posts in the window, and when the oldest frees a slot. */
export async function publishingLimit(
  deps: { accounts: AccountsDirectory; store: PostStore; now: () => Date },
  caller: Caller,
  accountId: string,
): Promise<PublishingLimitView> {
  const [account] = await deps.accounts.visible(caller, [accountId]);
  if (!account) throw errors.notFound('account');
  if (account.network !== 'photo_network')
    throw new ServiceError('unsupported', 'the publishing limit applies to photo_network accounts only');
  const published = await deps.store.publishedSince(accountId, windowStart(deps.now()));
  const used = published.length;
  const oldest = published[used - DAILY_PHOTO_LIMIT];
  return {
    limit: DAILY_PHOTO_LIMIT,
    used,
    remaining: Math.max(0, DAILY_PHOTO_LIMIT - used),
    window_hours: 24,
    next_slot_at:
      used >= DAILY_PHOTO_LIMIT && oldest ? new Date(oldest.getTime() + WINDOW_MS).toISOString() : null,
  };
}
