import { createHmac } from 'node:crypto';
import { describe, expect, it } from 'vitest';
import { deliveryHeaders } from './signature.ts';

describe('delivery headers', () => {
  // Guarantee: the published scheme: sha256=<hex HMAC-SHA256 of "<timestamp>.<raw body>">, timestamp in Unix seconds.
  it('signs "<timestamp>.<raw body>" with the secret', () => {
    const body = '{"id":"evt_x","type":"post.published"}';
    const headers = deliveryHeaders(
      { id: 'evt_x', type: 'post.published' },
      body,
      'whsec_k',
      new Date('2030-01-01T00:00:01.999Z'),
    );
    const timestamp = String(Date.UTC(2030, 0, 1, 0, 0, 1) / 1000);
    expect(headers).toEqual({
      'Content-Type': 'application/json',
      'User-Agent': 'svc-webhooks/1',
      'X-Service-Event': 'post.published',
      'X-Service-Delivery': 'evt_x',
      'X-Service-Timestamp': timestamp,
      'X-Service-Signature': `sha256=${createHmac('sha256', 'whsec_k').update(`${timestamp}.${body}`).digest('hex')}`,
    });
  });

  // Guarantee: each attempt is signed afresh: a later send has a later timestamp and another signature.
  it('changes timestamp and signature with the time of sending', () => {
    const first = deliveryHeaders({ id: 'e', type: 't' }, '{}', 's', new Date(1_000_000));
    const later = deliveryHeaders({ id: 'e', type: 't' }, '{}', 's', new Date(61_000_000));
    expect(later['X-Service-Timestamp']).not.toBe(first['X-Service-Timestamp']);
    expect(later['X-Service-Signature']).not.toBe(first['X-Service-Signature']);
  });
});
