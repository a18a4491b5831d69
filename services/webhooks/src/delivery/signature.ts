import { hmacSha256Hex } from '@svc/crypto';

/**
 * The headers of one delivery attempt (spec sections 5 and 6). The timestamp is the time of
 * sending, fresh on every attempt, so a receiver's clock-tolerance check passes on a late retry;
 * the signature is HMAC-SHA256 of `<timestamp>.<raw body>` with the webhook secret.
 */
export function deliveryHeaders(
  event: { id: string; type: string },
  body: string,
  secret: string,
  sentAt: Date,
): Record<string, string> {
  const timestamp = String(Math.floor(sentAt.getTime() / 1000));
  return {
    'Content-Type': 'application/json',
    'User-Agent': 'svc-webhooks/1',
    'X-Service-Event': event.type,
    'X-Service-Delivery': event.id,
    'X-Service-Timestamp': timestamp,
    'X-Service-Signature': `sha256=${hmacSha256Hex(secret, `${timestamp}.${body}`)}`,
  };
}
