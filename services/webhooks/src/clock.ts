/**
 * The time the delivery schedule runs on. Injectable so tests can run the whole six-attempt
 * schedule (about 14.6 hours) in seconds: every "now" of the schedule, the claim and the signature
 * timestamp comes from here, never from Date.now() or SQL now().
 */
export interface Clock {
  now(): Date;
}

export const systemClock: Clock = { now: () => new Date() };
