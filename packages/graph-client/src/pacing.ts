import type { GraphUsage } from './errors.ts';

/** Usage (percent of Meta's limit) from which calls are spaced out, and the widest spacing. */
const PACE_FROM_PERCENT = 75;
const MAX_SPACING_MS = 2_000;
/** Business objects remembered at once; the oldest is forgotten first (it is usage, not state). */
const MAX_BUSINESSES = 10_000;

interface Budget {
  /** The highest of call count, CPU time and total time, in percent of the limit. */
  percent: number;
  /** When Meta said access comes back (epoch ms); 0 when it is not throttled. */
  regainAt: number;
  /** The earliest start of the next call of this scope (epoch ms). */
  nextAt: number;
}

export type PaceDecision = { waitMs: number } | { throttledUntil: number };

/**
 * Meta's rate limits as this app has been told about them: every answer's `x-app-usage` (the
 * app's share of its hourly limit) and `x-business-use-case-usage` (each Page's or Instagram
 * account's share, with the time access comes back once it is throttled; facts §8.2). Calls are
 * spaced out before a limit is reached, wider the closer it is, and a call about a throttled
 * business object is not sent until Meta said it may be.
 */
export class CallPacing {
  private readonly app: Budget = { percent: 0, regainAt: 0, nextAt: 0 };
  private readonly businesses = new Map<string, Budget>();

  /** What one answer said, at `now`. */
  record(usage: GraphUsage | null, now: number): void {
    if (!usage) return;
    if (usage.app) this.app.percent = highest([usage.app]);
    for (const [id, entries] of Object.entries(usage.businessUseCase ?? {})) {
      if (!Array.isArray(entries)) continue;
      const budget = this.business(id);
      budget.percent = highest(entries);
      const minutes = Math.max(0, ...entries.map((e) => Number(e.estimated_time_to_regain_access) || 0));
      budget.regainAt = minutes > 0 ? now + minutes * 60_000 : 0;
    }
  }

  /**
   * Before a call about `businessId` (the first segment of its path, when it names one we were
   * told about): how long to wait, or until when the object is throttled. The wait is reserved:
   * concurrent callers queue behind each other.
   */
  before(businessId: string | undefined, now: number): PaceDecision {
    const business = businessId === undefined ? undefined : this.businesses.get(businessId);
    if (business && business.regainAt > now) return { throttledUntil: business.regainAt };
    const waits = [reserve(this.app, now)];
    if (business) waits.push(reserve(business, now));
    return { waitMs: Math.max(...waits) };
  }

  /** The app's usage and the highest of any business object's, in percent (for `/metrics`). */
  percentages(): { app: number; business: number } {
    let business = 0;
    for (const budget of this.businesses.values()) business = Math.max(business, budget.percent);
    return { app: this.app.percent, business };
  }

  private business(id: string): Budget {
    let budget = this.businesses.get(id);
    if (!budget) {
      if (this.businesses.size >= MAX_BUSINESSES) {
        const oldest = this.businesses.keys().next().value;
        if (oldest !== undefined) this.businesses.delete(oldest);
      }
      budget = { percent: 0, regainAt: 0, nextAt: 0 };
      this.businesses.set(id, budget);
    }
    return budget;
  }
}

/** The spacing a usage asks for: none below PACE_FROM_PERCENT, growing to MAX_SPACING_MS at 100%. */
export function spacingFor(percent: number): number {
  if (percent < PACE_FROM_PERCENT) return 0;
  const share = Math.min(1, (percent - PACE_FROM_PERCENT) / (100 - PACE_FROM_PERCENT));
  return Math.round(share * MAX_SPACING_MS);
}

/** Takes the next start of `budget`'s scope: the wait until it, and moves it on by the spacing. */
function reserve(budget: Budget, now: number): number {
  const spacing = spacingFor(budget.percent);
  if (spacing === 0) return 0;
  const start = Math.max(now, budget.nextAt);
  budget.nextAt = start + spacing;
  return start - now;
}

function highest(entries: Record<string, unknown>[]): number {
  let percent = 0;
  for (const entry of entries)
    for (const field of ['call_count', 'total_cputime', 'total_time']) {
      const value = Number(entry[field]);
      if (Number.isFinite(value)) percent = Math.max(percent, value);
    }
  return percent;
}
