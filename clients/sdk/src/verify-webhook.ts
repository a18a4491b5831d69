import { createHmac, timingSafeEqual } from 'node:crypto';
import type { ServiceEvent } from './events.ts';

/**
 * How a partner checks a webhook delivery (spec section 5): `X-Service-Signature` is
 * `sha256=<hex>`, the HMAC-SHA256 of `<X-Service-Timestamp>.<raw body>` keyed with the webhook
 * secret. Verify against the raw bytes as received (before any JSON parsing), compare in constant
 * time, and refuse timestamps too far from your clock so a captured delivery cannot be replayed
 * later. Dependency-free (node:crypto only), so it can ship as is in the SDK.
 *
 *   const event = verifyWebhook({ secret: process.env.WEBHOOK_SECRET, headers: req.headers, rawBody });
 *   // then de-duplicate by event.id (the same as X-Service-Delivery): deliveries can repeat.
 */
export interface WebhookEvent<Data = Record<string, unknown>> {
  id: string;
  type: string;
  created_at: string;
  partner: string;
  workspace: string | null;
  external_id: string | null;
  data: Data;
}

export type HeaderBag = Headers | Record<string, string | string[] | undefined>;

export interface VerifyWebhookOptions {
  secret: string;
  /** The request headers: a fetch `Headers` or Node's `IncomingHttpHeaders` (any case of names). */
  headers: HeaderBag;
  /** The body exactly as received. */
  rawBody: string | Uint8Array;
  /** How far X-Service-Timestamp may be from `now`, either way. */
  toleranceSeconds?: number;
  now?: Date | number;
}

export type VerificationFailure =
  | 'missing_header'
  | 'malformed_signature'
  | 'timestamp_out_of_tolerance'
  | 'signature_mismatch'
  | 'malformed_body';

export class WebhookVerificationError extends Error {
  override name = 'WebhookVerificationError';

  constructor(
    readonly reason: VerificationFailure,
    message: string,
  ) {
    super(message);
  }
}

const SIGNATURE = /^sha256=([0-9a-f]{64})$/;

/**
 * Returns the verified event, typed by its `type` (see ServiceEvent), or with the `data` type
 * given (`verifyWebhook<MyData>(…)`, as before typed payloads); throws WebhookVerificationError
 * (with a `reason`) otherwise.
 */
export function verifyWebhook(options: VerifyWebhookOptions): ServiceEvent;
export function verifyWebhook<Data>(options: VerifyWebhookOptions): WebhookEvent<Data>;
export function verifyWebhook(options: VerifyWebhookOptions): ServiceEvent | WebhookEvent {
  const signatureHeader = header(options.headers, 'x-service-signature');
  const timestampHeader = header(options.headers, 'x-service-timestamp');
  if (!signatureHeader || !timestampHeader)
    throw new WebhookVerificationError(
      'missing_header',
      'X-Service-Signature and X-Service-Timestamp are required',
    );
  const given = SIGNATURE.exec(signatureHeader.trim())?.[1];
  if (!given || !/^\d{1,12}$/.test(timestampHeader))
    throw new WebhookVerificationError('malformed_signature', 'malformed signature or timestamp header');

  const tolerance = options.toleranceSeconds ?? 300;
  const nowSeconds = Math.floor(Number(options.now ?? Date.now()) / 1000);
  if (Math.abs(nowSeconds - Number(timestampHeader)) > tolerance)
    throw new WebhookVerificationError(
      'timestamp_out_of_tolerance',
      `X-Service-Timestamp is more than ${tolerance} s away from now`,
    );

  const raw = options.rawBody;
  const body =
    typeof raw === 'string'
      ? Buffer.from(raw, 'utf8')
      : Buffer.from(raw.buffer, raw.byteOffset, raw.byteLength);
  const expected = createHmac('sha256', options.secret).update(`${timestampHeader}.`).update(body).digest();
  if (!timingSafeEqual(expected, Buffer.from(given, 'hex')))
    throw new WebhookVerificationError('signature_mismatch', 'the signature does not match');

  try {
    return JSON.parse(body.toString('utf8')) as ServiceEvent;
  } catch {
    throw new WebhookVerificationError('malformed_body', 'the body is not JSON');
  }
}

function header(headers: HeaderBag, name: string): string | undefined {
  if (typeof (headers as Headers).get === 'function') return (headers as Headers).get(name) ?? undefined;
  const bag = headers as Record<string, string | string[] | undefined>;
  const key = Object.keys(bag).find((k) => k.toLowerCase() === name);
  const value = key === undefined ? undefined : bag[key];
  return Array.isArray(value) ? value[0] : value;
}
