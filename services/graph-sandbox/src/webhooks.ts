import { createHmac } from 'node:crypto';
import { hmacSha256Hex } from '@svc/crypto';
import type { Logger } from '@svc/logging';
import { unixSeconds } from './clock.ts';
import type { SandboxConfig } from './config.ts';
import type { Store, WebhookAttempt } from './store.ts';

/**
 * Meta's JSON text (facts §5.3): non-ASCII escaped as lowercase `\uXXXX` and `/` as `\/`. The
 * signature covers exactly these bytes, so a receiver that re-serializes the parsed body fails here
 * just as it would against Meta.
 */
export function metaJson(value: unknown): string {
  return JSON.stringify(value)
    .replace(/[\u007f-\uffff]/g, (ch) => `\\u${ch.charCodeAt(0).toString(16).padStart(4, '0')}`)
    .replaceAll('/', '\\/');
}

export function signatureHeaders(secret: string, body: string): Record<string, string> {
  return {
    'x-hub-signature-256': `sha256=${hmacSha256Hex(secret, body)}`,
    'x-hub-signature': `sha1=${createHmac('sha1', secret).update(body).digest('hex')}`,
  };
}

/** `signed_request` (facts §6): base64url(raw HMAC-SHA256 over the payload segment) "." base64url(JSON). */
export function signedRequest(secret: string, payload: Record<string, unknown>): string {
  const encoded = Buffer.from(JSON.stringify(payload)).toString('base64url');
  const sig = createHmac('sha256', secret).update(encoded).digest('base64url');
  return `${sig}.${encoded}`;
}

export interface DeliveryResult {
  url: string | null;
  status: number | null;
  error: string | null;
}

export class WebhookSender {
  private readonly timers = new Set<NodeJS.Timeout>();

  constructor(
    private readonly config: SandboxConfig,
    private readonly log: Logger,
    private readonly store: () => Store,
  ) {}

  /** POSTs one event; the first attempt is awaited (tests see its outcome), retries run later. */
  async sendEvent(payload: Record<string, unknown>): Promise<DeliveryResult> {
    const url = this.config.webhookUrl;
    if (!url) return { url: null, status: null, error: 'SANDBOX_WEBHOOK_URL is not set' };
    const body = metaJson(payload);
    const headers = { 'content-type': 'application/json', ...signatureHeaders(this.config.appSecret, body) };
    return this.attempt('event', url, { method: 'POST', headers, body }, 1);
  }

  async sendDeauthorize(userId: string, now: number): Promise<DeliveryResult> {
    const url = this.config.deauthorizeUrl;
    if (!url) return { url: null, status: null, error: 'SANDBOX_DEAUTHORIZE_URL is not set' };
    const request = signedRequest(this.config.appSecret, {
      algorithm: 'HMAC-SHA256',
      issued_at: unixSeconds(now),
      user_id: userId,
    });
    const body = new URLSearchParams({ signed_request: request }).toString();
    const init = { method: 'POST', headers: { 'content-type': 'application/x-www-form-urlencoded' }, body };
    return this.attempt('deauthorize', url, init, 1);
  }

  /** Meta's subscription handshake: GET with hub.* and expect the challenge echoed as the body. */
  async verify(
    url: string,
    verifyToken: string,
  ): Promise<DeliveryResult & { challenge: string; ok: boolean }> {
    const challenge = String(1_000_000_000 + Math.floor(Math.random() * 1_000_000_000));
    const target = new URL(url);
    target.searchParams.set('hub.mode', 'subscribe');
    target.searchParams.set('hub.challenge', challenge);
    target.searchParams.set('hub.verify_token', verifyToken);
    try {
      const res = await fetch(target, { signal: AbortSignal.timeout(this.config.webhookTimeoutMs) });
      const text = await res.text();
      this.record({ kind: 'verification', url, attempt: 1, status: res.status, error: null, body: '' });
      return {
        url,
        status: res.status,
        error: null,
        challenge,
        ok: res.status === 200 && text === challenge,
      };
    } catch (error) {
      const message = error instanceof Error ? error.message : String(error);
      this.record({ kind: 'verification', url, attempt: 1, status: null, error: message, body: '' });
      return { url, status: null, error: message, challenge, ok: false };
    }
  }

  close(): void {
    for (const timer of this.timers) clearTimeout(timer);
    this.timers.clear();
  }

  private async attempt(
    kind: WebhookAttempt['kind'],
    url: string,
    init: { method: string; headers: Record<string, string>; body: string },
    attempt: number,
  ): Promise<DeliveryResult> {
    let result: DeliveryResult;
    try {
      const res = await fetch(url, {
        ...init,
        redirect: 'manual',
        signal: AbortSignal.timeout(this.config.webhookTimeoutMs),
      });
      await res.arrayBuffer();
      result = { url, status: res.status, error: res.ok ? null : `HTTP ${res.status}` };
    } catch (error) {
      result = { url, status: null, error: error instanceof Error ? error.message : String(error) };
    }
    this.record({ kind, url, attempt, status: result.status, error: result.error, body: init.body });
    if (result.error && attempt <= this.config.webhookRetries) this.retryLater(kind, url, init, attempt);
    return result;
  }

  /** Meta retries failed deliveries with growing delays; so does the sandbox (fewer, faster). */
  private retryLater(
    kind: WebhookAttempt['kind'],
    url: string,
    init: { method: string; headers: Record<string, string>; body: string },
    attempt: number,
  ): void {
    const delay = this.config.webhookRetryBaseMs * 4 ** (attempt - 1);
    const timer = setTimeout(() => {
      this.timers.delete(timer);
      void this.attempt(kind, url, init, attempt + 1);
    }, delay);
    timer.unref();
    this.timers.add(timer);
    this.log.warn({ url, attempt, delay }, 'webhook delivery failed; retrying later');
  }

  private record(entry: Omit<WebhookAttempt, 'at'>): void {
    this.store().webhookAttempts.push({ ...entry, at: new Date().toISOString() });
  }
}
