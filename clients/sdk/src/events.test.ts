import { createHmac } from 'node:crypto';
import { describe, expect, expectTypeOf, it } from 'vitest';
import document from './generated/openapi.json' with { type: 'json' };
import { type EventOfType, type EventType, verifyWebhook } from './index.ts';

const secret = 'whsec_test';
const now = 1_800_000_000_000;
const timestamp = String(now / 1000);
const sign = (payload: string) =>
  `sha256=${createHmac('sha256', secret).update(`${timestamp}.${payload}`).digest('hex')}`;

describe('typed events', () => {
  // Guarantee: message.updated is one of the SDK's event types, described under the document's webhooks.
  it('describes message.updated with the message as it is now', () => {
    expectTypeOf<'message.updated'>().toExtend<EventType>();
    type Message = EventOfType<'message.updated'>['data']['message'];
    expectTypeOf<Message['deleted_at']>().toEqualTypeOf<string | null>();
    expectTypeOf<Message['edited_at']>().toEqualTypeOf<string | null>();
    expectTypeOf<Message['reactions'][number]['reaction']>().toEqualTypeOf<string>();
    const webhooks = (document as { webhooks: Record<string, unknown> }).webhooks;
    expect(Object.keys(webhooks)).toContain('message.updated');
  });

  // Guarantee: a verified message.updated delivery narrows to its payload by `type`.
  it('narrows a verified message.updated delivery by its type', () => {
    const body = JSON.stringify({
      id: 'evt_2',
      type: 'message.updated',
      data: { message: { id: 'msg_1', text: null, deleted_at: '2026-11-26T10:00:00.000Z' } },
    });
    const headers = { 'x-service-signature': sign(body), 'x-service-timestamp': timestamp };
    const event = verifyWebhook({ secret, headers, rawBody: body, now });
    if (event.type !== 'message.updated') throw new Error(`got ${event.type}`);
    expect(event.data.message.deleted_at).toBe('2026-11-26T10:00:00.000Z');
  });
});
