/**
 * Outbound requests: one deadline over a whole exchange and, for URLs that someone else chose
 * (webhook deliveries, media fetched by URL), which addresses are off limits (loopback, private,
 * link-local, cloud metadata...) and a socket `lookup` that enforces it on the resolved address at
 * connect time; why a request failed, in words; and polling a remote side with back-off.
 */
export { blockedReason } from './addresses.ts';
export { type Backoff, pollWithBackoff } from './backoff.ts';
export { Deadline } from './deadline.ts';
export {
  assertLiteralHostAllowed,
  assertPublic,
  BlockedAddressError,
  guardedLookup,
  hostOf,
  isLoopbackHost,
  type Resolver,
  systemResolver,
} from './lookup.ts';
export { describeNetworkError } from './network-errors.ts';
