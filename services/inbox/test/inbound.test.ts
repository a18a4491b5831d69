import { eventually } from '@svc/testing';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { type Connected, connectedWorkspace, type InboxHarness, startInbox } from './harness.ts';

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
      const found = h.recorder.ofType('message.received').find((e) => (e.data as any).message.text === text);
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
    expect((event.data as any).conversation.id).toBe(conversation.id);
    expect((event.data as any).message).toEqual(messages.body.data[0]);
    expect(event.workspace).toBe(w.workspace);
  });
});
