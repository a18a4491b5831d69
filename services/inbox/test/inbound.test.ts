import type { MessageView } from '@svc/contracts/public';
import { eventually } from '@svc/testing';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { type Connected, connectedWorkspace, dataOf, type InboxHarness, startInbox } from './harness.ts';

/**
 * Inbound messages end to end: the sandbox sends Meta's signed webhooks to the gateway, the
 * gateway puts them on the PROVIDER stream, inbox records them once and announces them.
 */
let h: InboxHarness;
let w: Connected;

beforeAll(async () => {
  h = await startInbox();
  w = await connectedWorkspace(h);
});
afterAll(() => h.stop());

interface Conversation {
  id: string;
  kind: string;
  account: string;
  contact: { id: string; name: string | null; handle: string | null } | null;
  unread_count: number;
  last_message_at: string;
  reply_window: { open: boolean; closes_at: string } | null;
}

async function conversationsOf(account: string): Promise<Conversation[]> {
  const list = await h.call('GET', `/v1/conversations?account=${account}`);
  expect(list.status).toBe(200);
  return list.body.data as Conversation[];
}

describe('inbound direct messages', () => {
  // Guarantee: a DM on either network becomes a conversation, a message and message.received.
  it.each([
    ['photo_network', 'instagram'],
    ['page_network', 'pages'],
  ] as const)('records a %s DM and announces it', async (network, path) => {
    const account = network === 'photo_network' ? w.ig : w.page;
    const text = `Open on Sunday? ${network}`;
    const sent = await h.system.sandboxControl<{ message_id: string }>(
      'POST',
      `/__sandbox/${path}/${account.platform_id}/messages`,
      { from: { username: `fan_${network}`, name: `Fan ${network}` }, text },
    );
    const event = await eventually(() => {
      const found = h.recorder.ofType('message.received').find((e) => dataOf(e).message.text === text);
      if (!found) throw new Error('no event yet');
      return found;
    });
    const conversations = await conversationsOf(account.id);
    expect(conversations).toHaveLength(1);
    const conversation = conversations[0] as Conversation;
    expect(conversation).toMatchObject({ kind: 'dm', account: account.id, unread_count: 1 });
    expect(conversation.reply_window?.open).toBe(true);
    const messages = await h.call('GET', `/v1/conversations/${conversation.id}/messages`);
    expect(messages.body.data).toHaveLength(1);
    expect(messages.body.data[0]).toMatchObject({
      direction: 'inbound',
      kind: 'message',
      platform_message_id: sent.message_id,
      text,
      source: null,
    });
    expect(dataOf(event).conversation.id).toBe(conversation.id);
    expect(dataOf(event).message).toEqual(messages.body.data[0]);
    expect(event.workspace).toBe(w.workspace);
  });
});

/** The delivery id of the webhook a sandbox control call sent. */
const deliveryOf = (sent: { webhook: { id: string } }) => sent.webhook.id;

describe('at-least-once delivery', () => {
  // Guarantee: Meta's duplicates and reordering give one message and one event per network id.
  it('records a webhook delivered three times, and one delivered late, once each', async () => {
    const first = await h.system.sandboxControl<{ message_id: string; webhook: { id: string } }>(
      'POST',
      `/__sandbox/instagram/${w.ig.platform_id}/messages`,
      { from: { username: 'twice' }, text: 'first' },
    );
    const second = await h.system.sandboxControl<{ message_id: string; webhook: { id: string } }>(
      'POST',
      `/__sandbox/instagram/${w.ig.platform_id}/messages`,
      { from: { username: 'twice' }, text: 'second' },
    );
    await h.system.sandboxControl('POST', `/__sandbox/webhooks/${deliveryOf(second)}/replay`, { times: 2 });
    await h.system.sandboxControl('POST', `/__sandbox/webhooks/${deliveryOf(first)}/replay`, { times: 1 });
    const events = () =>
      h.recorder
        .ofType('message.received')
        .filter((e) =>
          [first.message_id, second.message_id].includes(dataOf(e).message.platform_message_id ?? ''),
        );
    await eventually(() => expect(events()).toHaveLength(2));
    await new Promise((resolve) => setTimeout(resolve, 500));
    expect(events()).toHaveLength(2);
    const conversation = dataOf(events()[0] as { data: unknown }).conversation.id;
    const messages = (await h.call('GET', `/v1/conversations/${conversation}/messages`)).body
      .data as MessageView[];
    expect(messages.map((m) => m.text)).toEqual(['first', 'second']);
    expect((await h.call('GET', `/v1/conversations/${conversation}`)).body.unread_count).toBe(2);
  });
});

describe('echoes', () => {
  // Guarantee: a message sent from the network's own app is recorded once, outbound, source network.
  it('records an answer from the network app as an outbound message with message.sent', async () => {
    const inbound = await h.system.sandboxControl<{ sender_id: string }>(
      'POST',
      `/__sandbox/pages/${w.page.platform_id}/messages`,
      { from: { name: 'Echo Person' }, text: 'hello from a person' },
    );
    const answered = await h.system.sandboxControl<{ message_id: string }>(
      'POST',
      `/__sandbox/pages/${w.page.platform_id}/app-messages`,
      { to: { id: inbound.sender_id }, text: 'answered in the app' },
    );
    const event = await eventually(() => {
      const found = h.recorder
        .ofType('message.sent')
        .find((e) => dataOf(e).message.platform_message_id === answered.message_id);
      if (!found) throw new Error('no message.sent yet');
      return found;
    });
    expect(dataOf(event).message).toMatchObject({
      direction: 'outbound',
      source: 'network',
      text: 'answered in the app',
    });
    const conversation = dataOf(event).conversation.id as string;
    const messages = (await h.call('GET', `/v1/conversations/${conversation}/messages`)).body
      .data as MessageView[];
    expect(messages.map((m) => [m.direction, m.text])).toEqual([
      ['inbound', 'hello from a person'],
      ['outbound', 'answered in the app'],
    ]);
  });
});

describe('attachments', () => {
  // Guarantee: an inbound image is kept with its URL as the network hosts it.
  it('keeps the attachments of an inbound DM', async () => {
    const url = 'https://lookaside.example/photo.jpg';
    const sent = await h.system.sandboxControl<{ message_id: string }>(
      'POST',
      `/__sandbox/instagram/${w.ig.platform_id}/messages`,
      { from: { username: 'photographer' }, attachments: [{ type: 'image', url }] },
    );
    const message = await eventually(() => {
      const found = h.recorder
        .ofType('message.received')
        .find((e) => dataOf(e).message.platform_message_id === sent.message_id);
      return found ? dataOf(found).message : undefined;
    });
    expect(message.attachments).toEqual([{ type: 'image', url }]);
    expect(message.text).toBeNull();
  });
});
