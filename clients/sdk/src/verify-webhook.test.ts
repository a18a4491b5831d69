import { createHmac } from 'node:crypto';
import { describe, expect, it } from 'vitest';
import { verifyWebhook, WebhookVerificationError } from './index.ts';

const secret = 'whsec_test';
const body = '{"id":"evt_1","type":"ping","data":{}}';
const now = 1_800_000_000_000;
const timestamp = String(now / 1000);

function sign(payload: string, at = timestamp, key = secret) {
  return `sha256=${createHmac('sha256', key).update(`${at}.${payload}`).digest('hex')}`;
}

function failure(run: () => unknown): string {
  try {
    run();
  } catch (error) {
    if (error instanceof WebhookVerificationError) return error.reason;
    throw error;
  }
  return 'passed';
}

describe('verifyWebhook', () => {
  // Guarantee: a correctly signed delivery verifies (Node headers, any case) and returns the event.
  it('accepts a valid signature and returns the parsed event', () => {
    const event = verifyWebhook({
      secret,
      headers: { 'X-Service-Signature': sign(body), 'x-service-timestamp': timestamp },
      rawBody: Buffer.from(body),
      now,
    });
    expect(event).toEqual({ id: 'evt_1', type: 'ping', data: {} });
    const viaFetchHeaders = new Headers({
      'x-service-signature': sign(body),
      'x-service-timestamp': timestamp,
    });
    expect(verifyWebhook({ secret, headers: viaFetchHeaders, rawBody: body, now }).id).toBe('evt_1');
  });

  // Guarantee: any change to the body, the timestamp or the secret is refused.
  it('refuses a tampered body, timestamp or a wrong secret', () => {
    const headers = { 'x-service-signature': sign(body), 'x-service-timestamp': timestamp };
    expect(failure(() => verifyWebhook({ secret, headers, rawBody: `${body} `, now }))).toBe(
      'signature_mismatch',
    );
    expect(failure(() => verifyWebhook({ secret: 'whsec_other', headers, rawBody: body, now }))).toBe(
      'signature_mismatch',
    );
    const shifted = { ...headers, 'x-service-timestamp': String(Number(timestamp) + 1) };
    expect(failure(() => verifyWebhook({ secret, headers: shifted, rawBody: body, now }))).toBe(
      'signature_mismatch',
    );
  });

  // Guarantee: replays outside the tolerance window are refused, either direction; inside it pass.
  it('enforces the timestamp tolerance', () => {
    const headers = { 'x-service-signature': sign(body), 'x-service-timestamp': timestamp };
    expect(failure(() => verifyWebhook({ secret, headers, rawBody: body, now: now + 301_000 }))).toBe(
      'timestamp_out_of_tolerance',
    );
    expect(failure(() => verifyWebhook({ secret, headers, rawBody: body, now: now - 301_000 }))).toBe(
      'timestamp_out_of_tolerance',
    );
    expect(failure(() => verifyWebhook({ secret, headers, rawBody: body, now: now + 299_000 }))).toBe(
      'passed',
    );
    expect(
      failure(() =>
        verifyWebhook({ secret, headers, rawBody: body, now: now + 3_599_000, toleranceSeconds: 3600 }),
      ),
    ).toBe('passed');
  });

  // Guarantee: missing or malformed headers are refused with a reason, never an exception of another kind.
  it('refuses missing and malformed headers', () => {
    expect(failure(() => verifyWebhook({ secret, headers: {}, rawBody: body, now }))).toBe('missing_header');
    const bad = { 'x-service-signature': 'sha1=abc', 'x-service-timestamp': timestamp };
    expect(failure(() => verifyWebhook({ secret, headers: bad, rawBody: body, now }))).toBe(
      'malformed_signature',
    );
    const badTime = { 'x-service-signature': sign(body), 'x-service-timestamp': 'yesterday' };
    expect(failure(() => verifyWebhook({ secret, headers: badTime, rawBody: body, now }))).toBe(
      'malformed_signature',
    );
  });
});
