import { createHmac, timingSafeEqual } from 'node:crypto';
import { hmacSha256Hex, safeEqual } from '@svc/crypto';

/**
 * Pure checks for what Meta sends us (facts §5.2, §5.3, §6). They take the raw bytes as received:
 * a parsed-and-reserialized body would not match Meta's escaping, so never verify that.
 */
export function verifyWebhookSignature(
  rawBody: Buffer | string,
  header: string | undefined,
  appSecret: string,
): boolean {
  if (!header?.startsWith('sha256=')) return false;
  const expected = `sha256=${hmacSha256Hex(appSecret, rawBody)}`;
  return safeEqual(header.toLowerCase(), expected);
}

export type VerificationAnswer = { status: 200; body: string } | { status: 403; body: string };

/** The subscription handshake: 200 with the raw `hub.challenge` as text when mode and token match, else 403. */
export function answerVerificationChallenge(
  query: Record<string, unknown>,
  verifyToken: string,
): VerificationAnswer {
  const mode = query['hub.mode'];
  const token = query['hub.verify_token'];
  const challenge = query['hub.challenge'];
  const ok =
    mode === 'subscribe' &&
    typeof token === 'string' &&
    safeEqual(token, verifyToken) &&
    typeof challenge === 'string';
  return ok ? { status: 200, body: challenge } : { status: 403, body: 'verification failed' };
}

export interface SignedRequestPayload {
  algorithm: string;
  issued_at?: number;
  user_id?: string;
  [key: string]: unknown;
}

/**
 * `signed_request` = base64url(raw HMAC-SHA256 of the payload segment) "." base64url(JSON).
 * Returns the payload only when the signature and algorithm check out; otherwise null.
 */
export function parseSignedRequest(signedRequest: string, appSecret: string): SignedRequestPayload | null {
  const dot = signedRequest.indexOf('.');
  if (dot <= 0) return null;
  const sig = Buffer.from(signedRequest.slice(0, dot), 'base64url');
  const encoded = signedRequest.slice(dot + 1);
  const expected = createHmac('sha256', appSecret).update(encoded).digest();
  if (sig.length !== expected.length || !timingSafeEqual(sig, expected)) return null;
  try {
    const payload = JSON.parse(Buffer.from(encoded, 'base64url').toString('utf8')) as unknown;
    if (!payload || typeof payload !== 'object') return null;
    const record = payload as SignedRequestPayload;
    if (typeof record.algorithm !== 'string' || record.algorithm.toUpperCase() !== 'HMAC-SHA256') return null;
    if (record.user_id !== undefined) record.user_id = String(record.user_id);
    return record;
  } catch {
    return null;
  }
}
