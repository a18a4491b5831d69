import { isIP } from 'node:net';
import {
  BlockedAddressError,
  blockedReason,
  Deadline,
  describeNetworkError,
  guardedLookup,
  type Resolver,
  systemResolver,
} from '@svc/net';
import { Agent, request } from 'undici';
import { hostOf } from '../network/url-policy.ts';

/**
 * Sends one delivery attempt. Why undici rather than fetch or node:http: its `request` never
 * follows redirects (a 3xx is simply an answer, which counts as a failure), it takes the socket's
 * `lookup` through its `connect` options (so the SSRF check runs on the resolved address at connect
 * time), one deadline aborts it at any stage (connect, headers, body), it pools keep-alive
 * connections per origin, and it is the client the raw-sender ceiling of bench:webhooks is
 * measured with, so the benchmark compares like with like.
 */
export interface AttemptOutcome {
  statusCode: number | null;
  /** Why the attempt failed; null on success. Short, and never carries the secret or the body. */
  error: string | null;
  latencyMs: number;
  succeeded: boolean;
}

/** Success is decided by the status alone; of the body we read no more than this, then hang up. */
export const MAX_RESPONSE_BYTES = 4096;

export interface TransportOptions {
  timeoutMs: number;
  allowPrivateNetworks: boolean;
  resolver?: Resolver;
}

/** How much later than the deadline undici's own timers fire. */
const UNDICI_BACKSTOP_MS = 1_000;

export class WebhookTransport {
  private readonly agent: Agent;

  constructor(private readonly options: TransportOptions) {
    // The Deadline below is the real one; undici's own timers only keep a connection from
    // lingering (their defaults are minutes), a little later than it so the deadline decides and
    // names the timeout however the machine schedules the two.
    const backstopMs = options.timeoutMs + UNDICI_BACKSTOP_MS;
    this.agent = new Agent({
      connect: {
        lookup: guardedLookup(options.resolver ?? systemResolver, options.allowPrivateNetworks),
        timeout: backstopMs,
      },
      headersTimeout: backstopMs,
      bodyTimeout: backstopMs,
      keepAliveTimeout: 4_000,
    });
  }

  async send(url: string, body: string, headers: Record<string, string>): Promise<AttemptOutcome> {
    const started = performance.now();
    const deadline = new Deadline(this.options.timeoutMs);
    let statusCode: number | null = null;
    try {
      this.assertLiteralAddressAllowed(url);
      const response = await request(url, {
        method: 'POST',
        headers,
        body,
        signal: deadline.signal,
        dispatcher: this.agent,
      });
      statusCode = response.statusCode;
      await readAtMost(response.body, MAX_RESPONSE_BYTES).catch(() => {
        // A 2xx followed by a body that drips or breaks is still a 2xx: the body is ignored.
      });
      const succeeded = statusCode >= 200 && statusCode < 300;
      return {
        statusCode,
        error: succeeded ? null : describeStatus(statusCode),
        latencyMs: elapsed(started),
        succeeded,
      };
    } catch (error) {
      const reason = deadline.expired
        ? `timed out after ${deadline.ms} ms`
        : describeNetworkError(error, 'receiver');
      return { statusCode, error: reason, latencyMs: elapsed(started), succeeded: false };
    } finally {
      deadline.clear();
    }
  }

  /** A URL with a literal IP connects without any lookup, so the check happens here for those. */
  private assertLiteralAddressAllowed(url: string): void {
    if (this.options.allowPrivateNetworks) return;
    const host = hostOf(new URL(url));
    if (!isIP(host)) return;
    const reason = blockedReason(host);
    if (reason) throw new BlockedAddressError(host, host, reason);
  }

  close(): Promise<void> {
    return this.agent.close();
  }
}

/** Reads until the end or `limit` bytes, whichever comes first; leaving the loop destroys the stream. */
async function readAtMost(stream: AsyncIterable<Buffer>, limit: number): Promise<void> {
  let read = 0;
  for await (const chunk of stream) {
    read += chunk.length;
    if (read >= limit) break;
  }
}

function describeStatus(status: number): string {
  if (status >= 300 && status < 400) return `redirect ${status} not followed`;
  return `HTTP ${status}`;
}

function elapsed(started: number): number {
  return Math.round(performance.now() - started);
}
