import { createHmac } from 'node:crypto';
import { hmacSha256Hex } from '@svc/crypto';
import type { Logger } from '@svc/logging';
import { type Clock, unixSeconds } from './clock.ts';
import type { SandboxConfig } from './config.ts';
import type { IdFactory } from './ids.ts';
import type { Delivery, Store, WebhookAttempt } from './store.ts';
import { takeHold } from './webhook-holds.ts';

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

/** The outcome of a first attempt, with the delivery's id (null when nothing was sent). */
export type SentDelivery = DeliveryResult & { id: string | null };

type Request = NonNullable<Delivery['request']>;
/** A delivery that is a POST (an event or the deauthorize callback), so it can be sent again. */
export type Sendable = Delivery & { request: Request };

export const isSendable = (delivery: Delivery): delivery is Sendable => delivery.request !== null;

const NO_WEBHOOK_URL = 'SANDBOX_WEBHOOK_URL is not set';
/** The `error` of a delivery a hold kept back (POST /__sandbox/webhooks/withhold). */
const WITHHELD = 'withheld';

export class WebhookSender {
  private readonly timers = new Set<NodeJS.Timeout>();

  constructor(
    private readonly config: SandboxConfig,
    private readonly log: Logger,
    private readonly store: () => Store,
    private readonly ids: IdFactory,
    private readonly clock: Clock,
  ) {}

  /** POSTs one event; the first attempt is awaited (tests see its outcome), retries run later. */
  async sendEvent(payload: Record<string, unknown>): Promise<SentDelivery> {
    const delivery = this.eventDelivery(payload);
    if (!delivery) return { id: null, url: null, status: null, error: NO_WEBHOOK_URL };
    if (this.withheld(delivery, payload))
      return { id: delivery.id, url: delivery.url, status: null, error: WITHHELD };
    return { id: delivery.id, ...(await this.attempt(delivery, 1, false)) };
  }

  /** Like sendEvent, but answers at once with the delivery id; the send runs in the background. */
  queueEvent(payload: Record<string, unknown>): string | null {
    const delivery = this.eventDelivery(payload);
    if (delivery && !this.withheld(delivery, payload)) void this.attempt(delivery, 1, false);
    return delivery?.id ?? null;
  }

  async sendDeauthorize(userId: string, now: number): Promise<SentDelivery> {
    const url = this.config.deauthorizeUrl;
    if (!url) return { id: null, url: null, status: null, error: 'SANDBOX_DEAUTHORIZE_URL is not set' };
    const request = signedRequest(this.config.appSecret, {
      algorithm: 'HMAC-SHA256',
      issued_at: unixSeconds(now),
      user_id: userId,
    });
    const body = new URLSearchParams({ signed_request: request }).toString();
    const headers = { 'content-type': 'application/x-www-form-urlencoded' };
    const delivery = this.register('deauthorize', url, { method: 'POST', headers, body });
    return { id: delivery.id, ...(await this.attempt(delivery, 1, false)) };
  }

  /**
   * Meta delivers at least once: sends a recorded delivery again, same bytes and signature,
   * `times` times in a row. Replays are not retried, so each one is exactly one request.
   */
  async replay(delivery: Sendable, times: number): Promise<DeliveryResult[]> {
    const results: DeliveryResult[] = [];
    for (let i = 0; i < times; i++) results.push(await this.attempt(delivery, 1, true));
    return results;
  }

  /** Meta's subscription handshake: GET with hub.* and expect the challenge echoed as the body. */
  async verify(url: string, verifyToken: string): Promise<SentDelivery & { challenge: string; ok: boolean }> {
    const challenge = String(1_000_000_000 + Math.floor(Math.random() * 1_000_000_000));
    const target = new URL(url);
    target.searchParams.set('hub.mode', 'subscribe');
    target.searchParams.set('hub.challenge', challenge);
    target.searchParams.set('hub.verify_token', verifyToken);
    const id = this.ids.delivery();
    this.store().deliveries.set(id, { id, kind: 'verification', url, request: null });
    const entry = { id, kind: 'verification' as const, url, attempt: 1, replay: false, body: '' };
    try {
      const res = await fetch(target, { signal: AbortSignal.timeout(this.config.webhookTimeoutMs) });
      const text = await res.text();
      this.record({ ...entry, status: res.status, error: null });
      return {
        id,
        url,
        status: res.status,
        error: null,
        challenge,
        ok: res.status === 200 && text === challenge,
      };
    } catch (error) {
      const message = error instanceof Error ? error.message : String(error);
      this.record({ ...entry, status: null, error: message });
      return { id, url, status: null, error: message, challenge, ok: false };
    }
  }

  close(): void {
    for (const timer of this.timers) clearTimeout(timer);
    this.timers.clear();
  }

  /**
   * A delivery a hold takes is listed (attempt 1, no status, error `withheld`) and never sent; it
   * stays registered, so a replay can deliver it late.
   */
  private withheld(delivery: Sendable, payload: Record<string, unknown>): boolean {
    if (!takeHold(this.store().webhookHolds, payload)) return false;
    const { id, kind, url, request } = delivery;
    this.record({
      id,
      kind,
      url,
      attempt: 1,
      replay: false,
      status: null,
      error: WITHHELD,
      body: request.body,
    });
    this.log.info({ delivery: id }, 'webhook withheld');
    return true;
  }

  private eventDelivery(payload: Record<string, unknown>): Sendable | null {
    const url = this.config.webhookUrl;
    if (!url) return null;
    const body = metaJson(payload);
    const headers = { 'content-type': 'application/json', ...signatureHeaders(this.config.appSecret, body) };
    return this.register('event', url, { method: 'POST', headers, body });
  }

  private register(kind: Delivery['kind'], url: string, request: Request): Sendable {
    const delivery: Sendable = { id: this.ids.delivery(), kind, url, request };
    this.store().deliveries.set(delivery.id, delivery);
    return delivery;
  }

  private async attempt(delivery: Sendable, attempt: number, replay: boolean): Promise<DeliveryResult> {
    const { url, request } = delivery;
    let result: DeliveryResult;
    try {
      const res = await fetch(url, {
        ...request,
        redirect: 'manual',
        signal: AbortSignal.timeout(this.config.webhookTimeoutMs),
      });
      await res.arrayBuffer();
      result = { url, status: res.status, error: res.ok ? null : `HTTP ${res.status}` };
    } catch (error) {
      result = { url, status: null, error: error instanceof Error ? error.message : String(error) };
    }
    this.record({
      id: delivery.id,
      kind: delivery.kind,
      url,
      attempt,
      replay,
      status: result.status,
      error: result.error,
      body: request.body,
    });
    if (result.error && !replay && attempt <= this.config.webhookRetries) this.retryLater(delivery, attempt);
    return result;
  }

  /** Meta retries failed deliveries with growing delays; so does the sandbox (fewer, faster). */
  private retryLater(delivery: Sendable, attempt: number): void {
    const delay = this.config.webhookRetryBaseMs * 4 ** (attempt - 1);
    const timer = setTimeout(() => {
      this.timers.delete(timer);
      void this.attempt(delivery, attempt + 1, false);
    }, delay);
    timer.unref();
    this.timers.add(timer);
    this.log.warn({ url: delivery.url, attempt, delay }, 'webhook delivery failed; retrying later');
  }

  /** `at` is the sandbox clock, like the payloads' own times. */
  private record(entry: Omit<WebhookAttempt, 'at'>): void {
    this.store().webhookAttempts.push({ ...entry, at: new Date(this.clock.now()).toISOString() });
  }
}
