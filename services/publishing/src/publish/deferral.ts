import { GraphApiError } from '@svc/graph-client';
import type { ClaimedTarget } from '../posts/post-rows.ts';

/** How long one attempt of a target may wait for the network in all before it fails. */
const MAX_WAIT_MS = 60 * 60_000;
/** The wait after an outage answer when the breaker gave no time (it has not opened yet). */
const OUTAGE_RETRY_MS = 5_000;
/**
 * Checks of media the network is processing: the first soon, then backing off to at most 30 s
 * apart, so a video is published within 30 s of being ready and a long one costs a call every
 * 30 s (Meta asks for no more than about one a minute per container: facts §2.1).
 */
const PROCESSING_CHECK = { firstMs: 2_000, maxMs: 30_000 };

/**
 * When to check again media the network is still processing, or null when the attempt has
 * waited MAX_WAIT_MS in all: each wait is half the time waited so far, within PROCESSING_CHECK.
 */
export function processingCheckTime(target: Pick<ClaimedTarget, 'waitingSince'>, now: Date): Date | null {
  const waitedMs = target.waitingSince ? now.getTime() - target.waitingSince.getTime() : 0;
  if (waitedMs >= MAX_WAIT_MS) return null;
  const delayMs = Math.min(PROCESSING_CHECK.maxMs, Math.max(PROCESSING_CHECK.firstMs, waitedMs / 2));
  return new Date(now.getTime() + delayMs);
}

export const MAX_WAIT_MINUTES = MAX_WAIT_MS / 60_000;

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
