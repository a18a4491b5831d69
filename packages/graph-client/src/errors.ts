import { ServiceError } from '@svc/errors';

/**
 * One mapping from Meta's error object (facts §7) to the product's errors: every failure is a
 * `network_error` (HTTP 502) keeping Meta's message, with `details = { code, subcode, type,
 * fbtrace_id }` (plus `usage` for rate limits). `kind` and `tokenProblem` tell callers what to do
 * without re-reading Meta's code tables.
 */
export type GraphErrorKind =
  | 'token' // 190/102: the account must be reconnected; see tokenProblem
  | 'rate_limit' // 4, 17, 32, 613, 80000–80014: back off, never hammered
  | 'quota' // 9/2207042: Instagram's 24 h publishing limit
  | 'permission' // 10, 200–299: a permission or task is missing
  | 'messaging_window' // 10/2018278, 10/2534022: outside the 24 h (or 7 day) window
  | 'media' // Meta refused the media (2207xxx, 36000–36004, 9004, 1366046, 1609005)
  | 'transient' // is_transient, or code 1/2 on a 5xx: retried, then surfaced
  | 'invalid_request' // anything else Meta refused
  | 'timeout' // no answer within the configured time
  | 'network' // no HTTP answer at all, or one that is not Graph JSON
  | 'unavailable'; // not sent: the app's breaker is open while Meta is down (see OutageBreaker)

/**
 * - `expired`: the token's time ran out (463; 493 data access expired) → account `expired`.
 * - `revoked`: the user took access away (458 app removed; 460 password changed; 492 lost the Page
 *   role) → account `revoked`.
 * - `invalid`: anything else (no subcode, 467, 459, 464, 2069032 wrong token type) → account in error.
 */
const TOKEN_PROBLEMS = ['expired', 'revoked', 'invalid'] as const;
export type TokenProblem = (typeof TOKEN_PROBLEMS)[number];
export const isTokenProblem = (value: string): value is TokenProblem =>
  (TOKEN_PROBLEMS as readonly string[]).includes(value);

export interface GraphUsage {
  app: Record<string, number> | null;
  businessUseCase: Record<string, Record<string, unknown>[]> | null;
  /** Largest `estimated_time_to_regain_access` (minutes in the header) in seconds, when given. */
  retryAfterSeconds: number | null;
}

export interface MetaErrorObject {
  message?: string;
  type?: string;
  code?: number;
  error_subcode?: number;
  is_transient?: boolean;
  error_user_title?: string;
  error_user_msg?: string;
  fbtrace_id?: string;
}

export const RATE_LIMIT_CODES = new Set([
  4, 17, 32, 613, 80000, 80001, 80002, 80003, 80004, 80005, 80006, 80008, 80009, 80014,
]);
const MEDIA_CODES = new Set([9004, 36000, 36001, 36003, 36004, 352, 1609005]);
const EXPIRED_SUBCODES = new Set([463, 493]);
const REVOKED_SUBCODES = new Set([458, 460, 492]);
const WINDOW_SUBCODES = new Set([2018278, 2534022, 2018065]);

export class GraphApiError extends ServiceError {
  override name = 'GraphApiError';

  constructor(
    message: string,
    readonly kind: GraphErrorKind,
    readonly graph: {
      code: number | null;
      subcode: number | null;
      type: string | null;
      fbtrace_id: string | null;
    },
    readonly extra: {
      providerStatus?: number | null;
      isTransient?: boolean;
      userTitle?: string | null;
      userMessage?: string | null;
      usage?: GraphUsage | null;
      /** When the call may be tried again (epoch ms), when that is known before any answer. */
      retryAt?: number;
      cause?: unknown;
    } = {},
  ) {
    const details: Record<string, unknown> = { ...graph };
    if (kind === 'rate_limit' && extra.usage) details.usage = extra.usage;
    super('network_error', message, { details, cause: extra.cause });
  }

  get tokenProblem(): TokenProblem | null {
    if (this.kind !== 'token') return null;
    const sub = this.graph.subcode ?? -1;
    if (EXPIRED_SUBCODES.has(sub)) return 'expired';
    if (REVOKED_SUBCODES.has(sub)) return 'revoked';
    return 'invalid';
  }

  get usage(): GraphUsage | null {
    return this.extra.usage ?? null;
  }

  get retryable(): boolean {
    return this.kind === 'transient';
  }

  /** When the answer came (or the call was refused unsent). */
  readonly at = Date.now();

  /**
   * When Meta said access comes back (a rate limit's `estimated_time_to_regain_access`), or when
   * the breaker lets calls through again; null when nobody said.
   */
  get retryAt(): Date | null {
    if (this.extra.retryAt !== undefined) return new Date(this.extra.retryAt);
    const seconds = this.usage?.retryAfterSeconds;
    return seconds ? new Date(this.at + seconds * 1000) : null;
  }

  /**
   * The call was never sent: the client held it back (a throttled account, the breaker open), so
   * unlike a timeout nothing can have reached the network.
   */
  get notSent(): boolean {
    return this.extra.retryAt !== undefined;
  }

  /**
   * Nobody knows whether the network acted on the call: it was sent and no Graph answer came (a
   * timeout, a dropped connection, an answer that is not Graph's).
   */
  get outcomeUnknown(): boolean {
    return this.graph.code === null && !this.notSent;
  }

  /** Meta is down or did not answer: the call may work later, nothing says the request was wrong. */
  get outage(): boolean {
    return ['transient', 'timeout', 'network', 'unavailable'].includes(this.kind);
  }
}

export function classify(e: MetaErrorObject, status: number): GraphErrorKind {
  const code = e.code ?? -1;
  const sub = e.error_subcode ?? -1;
  if (code === 190 || code === 102) return 'token';
  if (RATE_LIMIT_CODES.has(code)) return 'rate_limit';
  if (code === 9 && sub === 2207042) return 'quota';
  if (WINDOW_SUBCODES.has(sub)) return 'messaging_window';
  if (code === 10 || (code >= 200 && code <= 299)) return 'permission';
  if (e.is_transient === true || ((code === 1 || code === 2) && status >= 500)) return 'transient';
  if ((sub >= 2207000 && sub <= 2207999) || MEDIA_CODES.has(code) || sub === 1366046) return 'media';
  return 'invalid_request';
}

function parseJsonHeader(value: string | null): unknown {
  if (!value) return null;
  try {
    return JSON.parse(value);
  } catch {
    return null;
  }
}

/** What the error mapping reads of an answer's headers (a fetch `Headers` qualifies). */
export interface HeaderReader {
  get(name: string): string | null;
}

/** Reads `x-app-usage` and `x-business-use-case-usage` (facts §8.2); header names are case-insensitive. */
export function readUsage(headers: HeaderReader): GraphUsage | null {
  const app = parseJsonHeader(headers.get('x-app-usage')) as Record<string, number> | null;
  const buc = parseJsonHeader(headers.get('x-business-use-case-usage')) as Record<
    string,
    Record<string, unknown>[]
  > | null;
  if (!app && !buc) return null;
  const minutes = Object.values(buc ?? {})
    .flat()
    .map((entry) => Number(entry.estimated_time_to_regain_access))
    .filter((n) => Number.isFinite(n));
  return { app, businessUseCase: buc, retryAfterSeconds: minutes.length ? Math.max(...minutes) * 60 : null };
}

export function fromMetaError(e: MetaErrorObject, status: number, headers: HeaderReader): GraphApiError {
  const kind = classify(e, status);
  return new GraphApiError(
    e.message ?? `Graph API error (HTTP ${status})`,
    kind,
    {
      code: e.code ?? null,
      subcode: e.error_subcode ?? null,
      type: e.type ?? null,
      fbtrace_id: e.fbtrace_id ?? null,
    },
    {
      providerStatus: status,
      isTransient: e.is_transient === true,
      userTitle: e.error_user_title ?? null,
      userMessage: e.error_user_msg ?? null,
      usage: readUsage(headers),
    },
  );
}

export function transportError(
  kind: 'timeout' | 'network' | 'unavailable' | 'rate_limit',
  message: string,
  extra: { cause?: unknown; retryAt?: number } = {},
): GraphApiError {
  return new GraphApiError(message, kind, { code: null, subcode: null, type: kind, fbtrace_id: null }, extra);
}
