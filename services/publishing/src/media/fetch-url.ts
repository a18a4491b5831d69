import type { Readable } from 'node:stream';
import { errors, ServiceError } from '@svc/errors';
import {
  assertLiteralHostAllowed,
  BlockedAddressError,
  describeNetworkError,
  guardedLookup,
  hostOf,
  type Resolver,
  systemResolver,
} from '@svc/net';
import { Agent, type Dispatcher, request } from 'undici';

/**
 * Fetches media by URL with the webhook deliveries' SSRF rules: outside development no loopback,
 * private, link-local or metadata address is reached, judged on the address the socket actually
 * connects to (a guarded DNS lookup at connect time, so DNS rebinding does not help), and on
 * literal IPs before connecting. Redirects are followed by hand, at most MAX_REDIRECTS, each hop
 * checked again. One deadline covers connecting, redirects and the headers, a longer one the
 * whole transfer (a video takes a while), and the body stops as soon as it passes the size limit.
 *
 * Refusals that are the caller's to fix (bad URL, private address, too large) are
 * `validation_error` on `url`; failures of the remote side are `network_error` (502) with
 * `details: { host, reason, status? }`.
 */
export interface FetchMediaOptions {
  allowPrivateNetworks: boolean;
  /** Connecting, redirects and headers; also the longest silence within the body. */
  timeoutMs: number;
  /** The whole transfer, body included (`timeoutMs` when absent). */
  transferTimeoutMs?: number;
  maxBytes: number;
  resolver?: Resolver;
}

/** A response on its way: its declared length and its body, read once (or returned to hang up). */
export interface MediaDownload {
  declaredBytes: number | null;
  body: AsyncIterable<Buffer>;
}

const MAX_REDIRECTS = 3;
const MAX_URL_LENGTH = 2048;
const REDIRECTS = new Set([301, 302, 303, 307, 308]);

export function parseMediaUrl(text: string): URL {
  if (text.length > MAX_URL_LENGTH)
    throw errors.validation('url', `url is longer than ${MAX_URL_LENGTH} characters`);
  let url: URL;
  try {
    url = new URL(text);
  } catch {
    throw errors.validation('url', 'url must be an absolute http:// or https:// URL');
  }
  if (url.protocol !== 'https:' && url.protocol !== 'http:')
    throw errors.validation('url', 'url must use https or http');
  if (url.username || url.password) throw errors.validation('url', 'url must not contain credentials');
  if (!hostOf(url)) throw errors.validation('url', 'url has no host');
  url.hash = '';
  return url;
}

/** The whole file in memory (an image: small). */
export async function fetchMediaUrl(text: string, options: FetchMediaOptions): Promise<Buffer> {
  const chunks: Buffer[] = [];
  for await (const chunk of (await openMediaUrl(text, options)).body) chunks.push(chunk);
  return Buffer.concat(chunks);
}

/** The response to a URL, once its headers are in; its body streams as the caller reads it. */
export async function openMediaUrl(text: string, options: FetchMediaOptions): Promise<MediaDownload> {
  const transfer = new Transfer(options);
  try {
    let current = parseMediaUrl(text);
    for (let hop = 0; ; hop++) {
      assertAllowed(current, options.allowPrivateNetworks, hop);
      const response = await request(current, {
        method: 'GET',
        headers: {
          accept: 'image/jpeg, image/png, image/webp, video/mp4, video/quicktime, */*;q=0.1',
          'accept-encoding': 'identity',
        },
        signal: transfer.signal,
        dispatcher: transfer.agent,
      }).catch((error: unknown) => {
        throw failure(error, current, transfer.signal, hop);
      });
      const next = redirectOf(response, current, hop, options.maxBytes);
      if (next) {
        current = next;
        continue;
      }
      transfer.headersArrived();
      const declared = Number(response.headers['content-length']);
      const at = current;
      const body = readAtMost(response.body, options.maxBytes, (error) =>
        failure(error, at, transfer.signal, hop),
      );
      return { declaredBytes: Number.isFinite(declared) ? declared : null, body: transfer.ending(body) };
    }
  } catch (error) {
    transfer.end();
    throw error;
  }
}

/**
 * One fetch's connection pool and deadlines: the headers' (cleared once they arrive) and the
 * transfer's, both aborting the same signal. Ended when the body is read or abandoned.
 */
class Transfer {
  readonly agent: Agent;
  private readonly deadline = new AbortController();
  private readonly timers: NodeJS.Timeout[];

  constructor(options: FetchMediaOptions) {
    this.agent = new Agent({
      connect: {
        lookup: guardedLookup(options.resolver ?? systemResolver, options.allowPrivateNetworks),
        timeout: options.timeoutMs,
      },
      headersTimeout: options.timeoutMs,
      bodyTimeout: options.timeoutMs,
    });
    const abortAfter = (ms: number) =>
      setTimeout(() => this.deadline.abort(new Error(`timed out after ${ms} ms`)), ms);
    this.timers = [abortAfter(options.timeoutMs), abortAfter(options.transferTimeoutMs ?? options.timeoutMs)];
  }

  get signal(): AbortSignal {
    return this.deadline.signal;
  }

  headersArrived(): void {
    clearTimeout(this.timers[0]);
  }

  async *ending(body: AsyncIterable<Buffer>): AsyncGenerator<Buffer> {
    try {
      yield* body;
    } finally {
      this.end();
    }
  }

  end(): void {
    for (const timer of this.timers) clearTimeout(timer);
    this.agent.destroy().catch(() => {});
  }
}

/**
 * Where a redirect leads, or null when the response is the file itself; refuses an error status
 * and a declared length over the limit (its body is discarded either way).
 */
function redirectOf(
  response: Dispatcher.ResponseData,
  current: URL,
  hop: number,
  maxBytes: number,
): URL | null {
  const status = response.statusCode;
  const refuse = (error: Error) => {
    discard(response.body);
    return error;
  };
  if (REDIRECTS.has(status)) {
    const location = response.headers.location;
    if (typeof location !== 'string' || !location)
      throw refuse(networkError(current, `HTTP ${status} redirect without a Location`, status));
    if (hop >= MAX_REDIRECTS)
      throw refuse(networkError(current, `more than ${MAX_REDIRECTS} redirects`, status));
    discard(response.body);
    return redirectTarget(location, current);
  }
  if (status < 200 || status >= 300) throw refuse(networkError(current, `HTTP ${status}`, status));
  const declared = Number(response.headers['content-length']);
  if (Number.isFinite(declared) && declared > maxBytes) throw refuse(errors.fileTooLarge('url', maxBytes));
  return null;
}

/** The body's chunks, refused as soon as they pass `maxBytes`; any failure as `fail` says. */
async function* readAtMost(
  body: Readable,
  maxBytes: number,
  fail: (error: unknown) => Error,
): AsyncGenerator<Buffer> {
  let total = 0;
  try {
    for await (const chunk of body) {
      total += chunk.length;
      if (total > maxBytes) throw errors.fileTooLarge('url', maxBytes);
      yield chunk;
    }
  } catch (error) {
    throw fail(error);
  } finally {
    // Stopped early (too large, or the reader gave up): hang up rather than read for nobody.
    if (!body.readableEnded) discard(body);
  }
}

/** Hangs up on a body we will not read (destroying it emits an abort error nobody needs). */
function discard(body: { on(event: 'error', listener: () => void): unknown; destroy(): unknown }): void {
  body.on('error', () => {});
  body.destroy();
}

function assertAllowed(url: URL, allowPrivateNetworks: boolean, hop: number): void {
  try {
    assertLiteralHostAllowed(url, allowPrivateNetworks);
  } catch (error) {
    if (error instanceof BlockedAddressError) throw blocked(error, hop);
    throw error;
  }
}

function redirectTarget(location: string, from: URL): URL {
  let next: URL;
  try {
    next = new URL(location, from);
  } catch {
    throw networkError(from, 'redirect to an invalid Location');
  }
  if (next.protocol !== 'https:' && next.protocol !== 'http:')
    throw networkError(from, `redirect to a ${next.protocol} URL`);
  if (next.username || next.password) throw networkError(from, 'redirect to a URL with credentials');
  next.hash = '';
  return next;
}

/** Says only that the address is not allowed: what a name resolved to stays in our logs. */
function blocked(error: BlockedAddressError, hop: number): ServiceError {
  const how = hop === 0 ? 'url points to' : `url redirects to ${error.host}, which is`;
  return errors.validation(
    'url',
    `${how} an address that is not allowed; media can only be fetched from the public internet`,
  );
}

function networkError(url: URL, reason: string, status?: number): ServiceError {
  const host = url.host;
  return new ServiceError('network_error', `could not fetch the media from ${host}: ${reason}`, {
    details: { host, reason, ...(status !== undefined ? { status } : {}) },
  });
}

/** Any error of a request or body read, as what the caller should see. */
function failure(error: unknown, url: URL, deadline: AbortSignal, hop: number): ServiceError {
  if (error instanceof ServiceError) return error;
  const blockedError = findBlocked(error);
  if (blockedError) return blocked(blockedError, hop);
  if (deadline.aborted) return networkError(url, (deadline.reason as Error).message);
  return networkError(url, describeNetworkError(error));
}

function findBlocked(error: unknown): BlockedAddressError | null {
  let current: unknown = error;
  for (let depth = 0; depth < 4 && current; depth++) {
    if (current instanceof BlockedAddressError) return current;
    current = (current as { cause?: unknown }).cause;
  }
  return null;
}
