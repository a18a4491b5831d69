import { GraphApiError } from '@svc/graph-client';
import type { ClaimedTarget } from '../posts/post-rows.ts';

/** How long one attempt of a target may wait for the network in all before it fails. */
const MAX_WAIT_MS = 60 * 60_000;
/** The wait after an outage answer when the breaker gave no time (it has not opened yet). */
const OUTAGE_RETRY_MS = 5_000;

/**
 * When a target the network could not take now is tried again, or null when it fails: Meta
 * throttles its account and said when access comes back, or Meta is down (5xx, no answer, the
 * app's breaker open), and the attempt's waiting stays within MAX_WAIT_MS. Anything else (a
 * refusal of the post, a rate limit with no time given, the daily quota) fails the target as
 * before. A final publish call whose answer was lost never gets here: its outcome is unknown,
 * and waiting could post it twice (see NetworkPublisher.sendOnce).
 */
export function retryTimeOf(
  error: unknown,
  target: Pick<ClaimedTarget, 'waitingSince'>,
  now: Date,
): Date | null {
  if (!(error instanceof GraphApiError)) return null;
  const throttled = error.kind === 'rate_limit';
  if (!throttled && !error.outage) return null;
  const retryAt = error.retryAt ?? (throttled ? null : new Date(now.getTime() + OUTAGE_RETRY_MS));
  if (!retryAt) return null;
  const since = target.waitingSince ?? now;
  return retryAt.getTime() - since.getTime() <= MAX_WAIT_MS ? retryAt : null;
}
