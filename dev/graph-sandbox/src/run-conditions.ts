import type { FastifyReply } from 'fastify';
import { GraphFailure } from './graph-errors.ts';
import type { BusinessUsage, RunConfig, Throttle } from './run-config.ts';

/**
 * What the run-time configuration (run-config.ts) does to Graph answers: the usage headers every
 * answer carries, and the throttle and outage errors that replace an answer. With the config
 * empty, only the ordinary `x-app-usage` is added, as before the config existed.
 */

/** The usage header of an ordinary call when no usage is configured; rate-limit faults send their own. */
const APP_USAGE = JSON.stringify({ call_count: 1, total_cputime: 1, total_time: 1 });

type BucUsage = Record<string, BusinessUsage[]>;

/**
 * The ids a request's path names: each segment, and the Page part of a `{page}_{post}` id, since
 * Meta reports business use-case usage for the object the call concerns (facts §8.2).
 */
function pathIds(url: string): Set<string> {
  const path = url.split('?')[0] ?? '/';
  return new Set(path.split('/').map((segment) => segment.split('_')[0] ?? segment));
}

/** The configured BUC entries of every business id the path names, or null when there is none. */
function concernedUsage(business: BucUsage | undefined, ids: Set<string>): BucUsage | null {
  if (!business) return null;
  const concerned = Object.entries(business).filter(([id]) => ids.has(id));
  return concerned.length > 0 ? Object.fromEntries(concerned) : null;
}

/** Adds the usage headers to a Graph answer, leaving any a fault or a throttle already set. */
export function addUsageHeaders(reply: FastifyReply, config: RunConfig, url: string): void {
  const { usage } = config;
  if (!reply.hasHeader('x-app-usage'))
    reply.header('x-app-usage', usage?.app ? JSON.stringify(usage.app) : APP_USAGE);
  if (!usage?.business || reply.hasHeader('x-business-use-case-usage')) return;
  const buc = concernedUsage(usage.business, pathIds(url));
  if (buc) reply.header('x-business-use-case-usage', JSON.stringify(buc));
}

/** An error that replaces a Graph answer, with the headers it carries besides the usual ones. */
interface Refusal {
  failure: GraphFailure;
  headers: Record<string, string>;
}

const THROTTLED: Record<Throttle['code'], { type: string; object: string }> = {
  80001: { type: 'pages', object: 'Page account' },
  80002: { type: 'instagram', object: 'Instagram account' },
  80006: { type: 'messenger', object: 'Messenger account' },
};

function throttleRefusal(config: RunConfig, throttle: Throttle, ids: Set<string>): Refusal {
  const { type, object } = THROTTLED[throttle.code];
  const buc: BucUsage = {
    ...concernedUsage(config.usage?.business, ids),
    [throttle.business_id]: [
      {
        type,
        call_count: 100,
        total_cputime: 0,
        total_time: 0,
        estimated_time_to_regain_access: throttle.regain_minutes,
      },
    ],
  };
  const failure = new GraphFailure({
    message: `(#${throttle.code}) There have been too many calls to this ${object}. Wait a bit and try again.`,
    type: 'OAuthException',
    code: throttle.code,
    is_transient: true,
  });
  return { failure, headers: { 'x-business-use-case-usage': JSON.stringify(buc) } };
}

/** Meta down (its code 2, facts §7.2), then the throttled business object; else null. */
export function runConfigRefusal(config: RunConfig, url: string): Refusal | null {
  if (config.outage) {
    const body = {
      message: 'An unexpected error has occurred. Please retry your request later.',
      type: 'OAuthException',
      code: 2,
      is_transient: true,
    };
    return { failure: new GraphFailure(body, config.outage.status), headers: {} };
  }
  if (!config.throttle) return null;
  const ids = pathIds(url);
  return ids.has(config.throttle.business_id) ? throttleRefusal(config, config.throttle, ids) : null;
}
