/** How long a message's webhook may still be on its way after the message was written. */
const LIVE_MARGIN_MS = 60_000;

/** Where one import or reconciliation draws its lines between history and news, in milliseconds. */
export interface Horizon {
  historyBefore: number;
  liveFrom: number;
  connectedAt: number;
}

type Side = 'history' | 'news';

/**
 * The lines of a run that started at `startedAt`, for an account whose first import drew its
 * line at `historyBefore` and that connected at `connectedAt`. The networks' history gives times
 * in whole seconds, so both lines are drawn at the start of their second: a message of the same
 * second as the first import, or as the connection, is news. Drawn at the exact millisecond, a DM
 * written in the second the account connected and read by an import that began after it (its
 * `account.connected` came late) would be history, stored without an event, and its webhook,
 * arriving after, would find it stored: nobody would announce it.
 */
export function horizonOf(historyBefore: Date, startedAt: Date, connectedAt: Date | null): Horizon {
  return {
    historyBefore: startOfSecond(historyBefore.getTime()),
    liveFrom: startedAt.getTime() - LIVE_MARGIN_MS,
    connectedAt: connectedAt ? startOfSecond(connectedAt.getTime()) : 0,
  };
}

/**
 * History is what is older than the account's first import: it was there before the account
 * connected, and is stored without events. News is newer than the first import: it arrived while
 * the account was not active, while we were down, or its webhook never came, and the import
 * announces it, as its webhook would have. A message a little older than the first import (within
 * the live margin) that came after the account connected is news too: its webhook may still be on
 * its way, and whichever of the two stores it first announces it, once.
 */
export function sideOf(at: Date, horizon: Horizon): Side {
  const ms = at.getTime();
  if (ms >= horizon.historyBefore) return 'news';
  return ms >= horizon.liveFrom && ms >= horizon.connectedAt ? 'news' : 'history';
}

const startOfSecond = (ms: number) => ms - (ms % 1000);
