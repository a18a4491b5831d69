import type { IncomingHttpHeaders } from 'node:http';
import { hmacSha256Hex } from '@svc/crypto';
import { Deadline, describeNetworkError } from '@svc/net';
import { Agent, request as httpRequest } from 'undici';
import { OutageBreaker } from './breaker.ts';
import type { GraphClientConfig } from './config.ts';
import {
  fromMetaError,
  type GraphApiError,
  type HeaderReader,
  type MetaErrorObject,
  readUsage,
  transportError,
} from './errors.ts';
import { CallPacing } from './pacing.ts';

export type Scalar = string | number | boolean | undefined;

export interface GraphRequest {
  method: 'GET' | 'POST' | 'DELETE';
  path: string;
  token?: string;
  query?: Record<string, Scalar>;
  form?: Record<string, Scalar>;
  json?: unknown;
  /**
   * Meta's upload host instead of the Graph API (rupload: the `upload_url` a video upload was
   * given), with the file's URL in the `file_url` header and the token as `OAuth` (facts §2.2).
   * Only rupload.facebook.com or the Graph API's own origin (the sandbox) is called.
   */
  upload?: { url: string; fileUrl: string };
  /**
   * May the request be sent again when it got no answer (timeout, dropped connection)? True for
   * reads. Writes are not: Meta may have acted before the connection broke, and a second publish
   * would post twice. Explicit Graph answers marked transient are retried either way.
   */
  idempotent?: boolean;
}

const defaultSleep = (ms: number) => new Promise<void>((resolve) => setTimeout(resolve, ms));

/**
 * HTTP to Graph with timeouts, transient-only retries with exponential backoff, one error mapping,
 * pacing by Meta's usage headers and a breaker for Meta's outages (one app per client).
 */
export class GraphTransport {
  /** Keep-alive connections, shared by this client's calls. */
  private readonly agent = new Agent();
  readonly pacing = new CallPacing();
  private readonly breaker: OutageBreaker;

  constructor(readonly config: GraphClientConfig) {
    this.breaker = new OutageBreaker(config.breaker);
  }

  /** Closes the kept-alive connections. */
  async close(): Promise<void> {
    await this.agent.close();
  }

  async call<T = unknown>(request: GraphRequest): Promise<T> {
    const { maxAttempts } = this.config.retry;
    const idempotent = request.idempotent ?? request.method === 'GET';
    for (let attempt = 1; ; attempt++) {
      const outcome = await this.paced(request);
      if (outcome.ok) return outcome.body as T;
      const error = outcome.error;
      const noAnswer = error.kind === 'timeout' || error.kind === 'network';
      const retry = error.kind === 'transient' || (noAnswer && idempotent);
      if (!retry || attempt >= maxAttempts) throw error;
      await (this.config.sleep ?? defaultSleep)(this.backoff(attempt));
    }
  }

  /**
   * One call as Meta's limits allow: not sent while its business object is throttled or the
   * breaker is open (the error says when to try again), sent after the wait its usage asks for.
   */
  private async paced(request: GraphRequest): Promise<Outcome> {
    const sleep = this.config.sleep ?? defaultSleep;
    const pace = this.pacing.before(request.path.split('/')[1], Date.now());
    if ('throttledUntil' in pace)
      return refused('rate_limit', request, pace.throttledUntil, 'the network limits calls for this account');
    if (pace.waitMs > 0) await sleep(pace.waitMs);
    const admitted = this.breaker.admit(Date.now());
    if ('retryAt' in admitted)
      return refused('unavailable', request, admitted.retryAt, 'the network has been failing; calls paused');
    const started = performance.now();
    const outcome = await this.once(request);
    const down = !outcome.ok && isOutage(outcome.error);
    if (down) this.breaker.failed(Date.now(), admitted.probe);
    else this.breaker.succeeded();
    this.config.observer?.called(
      endpointOf(request),
      outcome.ok ? 'ok' : outcome.error.kind,
      (performance.now() - started) / 1000,
    );
    return outcome;
  }

  /** Exponential backoff with jitter in [50%, 100%] of the step, capped. */
  backoff(attempt: number): number {
    const { baseDelayMs, maxDelayMs } = this.config.retry;
    const step = Math.min(maxDelayMs, baseDelayMs * 2 ** (attempt - 1));
    const random = this.config.random ?? Math.random;
    return Math.round(step * (0.5 + random() / 2));
  }

  url(path: string, query: Record<string, Scalar> = {}): URL {
    const url = new URL(`${this.config.baseUrl}/${this.config.apiVersion}${path}`);
    for (const [key, value] of Object.entries(query))
      if (value !== undefined) url.searchParams.set(key, String(value));
    return url;
  }

  /**
   * Computed for every call: an HMAC is cheaper than the bookkeeping of keeping one per token
   * (bench:publish measured no gain from it).
   */
  private proofOf(token: string): string {
    return hmacSha256Hex(this.config.appSecret, token);
  }

  private async once(request: GraphRequest): Promise<Outcome> {
    const { url, headers, body } = this.httpRequestOf(request);
    const label = `${request.method} ${request.path}`;
    let answer: { status: number; headers: HeaderReader; text: string };
    const deadline = new Deadline(this.config.timeoutMs);
    try {
      // undici's own request API rather than fetch: the same client without the web-streams
      // machinery, which was most of a publish worker's HTTP cost. It follows no redirects. One
      // deadline for the whole exchange (undici's own header/body timeouts tick too coarsely).
      const res = await httpRequest(url, {
        method: request.method,
        headers,
        body,
        dispatcher: this.agent,
        signal: deadline.signal,
      });
      answer = { status: res.statusCode, headers: headerReader(res.headers), text: await res.body.text() };
    } catch (cause) {
      const error = deadline.expired
        ? transportError(
            'timeout',
            `Graph API did not answer within ${this.config.timeoutMs} ms (${label})`,
            {
              cause,
            },
          )
        : transportError('network', `Graph API unreachable (${label}): ${describeNetworkError(cause)}`, {
            cause,
          });
      return { ok: false, error };
    } finally {
      deadline.clear();
    }
    this.pacing.record(readUsage(answer.headers), Date.now());
    this.config.observer?.usage(this.pacing.percentages());
    return this.read(answer, label);
  }

  /** The URL (with the token's appsecret_proof), headers and body of one request. */
  private httpRequestOf(request: GraphRequest): {
    url: URL;
    headers: Record<string, string>;
    body: string | undefined;
  } {
    if (request.upload) return this.uploadRequestOf(request, request.upload);
    const query = { ...request.query };
    const headers: Record<string, string> = { accept: 'application/json' };
    if (request.token) {
      headers.authorization = `Bearer ${request.token}`;
      if (this.config.appSecretProof !== false && !request.token.includes('|')) {
        query.appsecret_proof = this.proofOf(request.token);
      }
    }
    let body: string | undefined;
    if (request.json !== undefined) {
      headers['content-type'] = 'application/json';
      body = JSON.stringify(request.json);
    } else if (request.form) {
      headers['content-type'] = 'application/x-www-form-urlencoded';
      const form = new URLSearchParams();
      for (const [k, v] of Object.entries(request.form)) if (v !== undefined) form.set(k, String(v));
      body = form.toString();
    }
    return { url: this.url(request.path, query), headers, body };
  }

  /** A hosted upload: the file fetched by Meta from `fileUrl`, nothing in the body. */
  private uploadRequestOf(request: GraphRequest, upload: { url: string; fileUrl: string }) {
    const url = new URL(upload.url);
    if (url.host !== 'rupload.facebook.com' && url.origin !== new URL(this.config.baseUrl).origin)
      throw new Error(`Graph API gave an upload URL on a host it does not own: ${url.host}`);
    const headers: Record<string, string> = { accept: 'application/json', file_url: upload.fileUrl };
    if (request.token) headers.authorization = `OAuth ${request.token}`;
    return { url, headers, body: undefined };
  }

  private read(res: { status: number; headers: HeaderReader; text: string }, label: string): Outcome {
    let parsed: unknown;
    try {
      parsed = JSON.parse(res.text);
    } catch (cause) {
      // A non-JSON answer is a proxy or outage page; a 5xx one is worth another try.
      const error =
        res.status >= 500
          ? fromMetaError(
              {
                message: `Graph API answered HTTP ${res.status} without JSON (${label})`,
                code: 2,
                is_transient: true,
              },
              res.status,
              res.headers,
            )
          : transportError('network', `Graph API answered HTTP ${res.status} without JSON (${label})`, {
              cause,
            });
      return { ok: false, error };
    }
    const errorObject =
      parsed && typeof parsed === 'object' ? (parsed as { error?: MetaErrorObject }).error : undefined;
    if (errorObject && typeof errorObject === 'object')
      return { ok: false, error: fromMetaError(errorObject, res.status, res.headers) };
    if (res.status < 200 || res.status > 299)
      return {
        ok: false,
        error: fromMetaError(
          { message: `Graph API answered HTTP ${res.status} (${label})${uploadRefusal(parsed)}` },
          res.status,
          res.headers,
        ),
      };
    return { ok: true, body: parsed };
  }
}

type Outcome = { ok: true; body: unknown } | { ok: false; error: GraphApiError };

/** A call not sent: its account is throttled, or the breaker is open, until `retryAt`. */
function refused(
  kind: 'rate_limit' | 'unavailable',
  request: GraphRequest,
  retryAt: number,
  why: string,
): Outcome {
  const message = `${why} until ${new Date(retryAt).toISOString()} (${endpointOf(request)} not sent)`;
  return { ok: false, error: transportError(kind, message, { retryAt }) };
}

/** Answers that say Meta is down (not that the request was wrong): they count towards the breaker. */
const isOutage = (error: GraphApiError) =>
  error.kind === 'transient' ||
  error.kind === 'timeout' ||
  error.kind === 'network' ||
  (error.extra.providerStatus ?? 0) >= 500;

/** Meta's upload host refuses in its own envelope, `{ debug_info: { type, message } }` [?]. */
function uploadRefusal(body: unknown): string {
  const info =
    body && typeof body === 'object'
      ? (body as { debug_info?: { message?: unknown } }).debug_info
      : undefined;
  return typeof info?.message === 'string' ? `: ${info.message}` : '';
}

/** The call's endpoint for metrics: every path segment holding a digit is an id. */
const endpointOf = (request: GraphRequest) =>
  `${request.method} ${request.path
    .split('/')
    .map((segment) => (/\d/.test(segment) ? '{id}' : segment))
    .join('/')}`;

function headerReader(headers: IncomingHttpHeaders): HeaderReader {
  return {
    get(name) {
      const value = headers[name.toLowerCase()];
      return Array.isArray(value) ? value.join(', ') : (value ?? null);
    },
  };
}
