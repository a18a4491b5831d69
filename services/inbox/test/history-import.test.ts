import type { ConversationView } from '@svc/contracts/public';
import { eventually } from '@svc/testing';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { connectedWorkspace, type InboxHarness, sandboxUser } from './harness.ts';
import { eventsAbout, messagesOf, settle, startTunedInbox } from './tuned-system.ts';

/**
 * The history import and `inbox-sync` against the sandbox over HTTP: what the network returns is
 * imported, however recent; what predates the account's connection is history (no event); what
 * came after it and that no webhook brought is news, announced once, whoever stores it first.
 * The periodic reconciliation is kept out of the way here (an hour apart): see reconciliation.test.ts.
 */
let h: InboxHarness;

beforeAll(async () => {
  h = await startTunedInbox({ inboxEnv: { INBOX_RECONCILE_INTERVAL_MS: '3600000' } });
}, 120_000);
afterAll(() => h.stop());

type Delivered = { message_id: string; webhook: { id: string; error: string | null } };

const withhold = (accountId: string, kind: 'message' | 'echo' | 'comment') =>
  h.system.sandboxControl('POST', '/__sandbox/webhooks/withhold', { account_id: accountId, kind });
const replay = (webhookId: string) =>
  h.system.sandboxControl('POST', `/__sandbox/webhooks/${webhookId}/replay`, { times: 1 });

async function conversationsOf(accountId: string): Promise<ConversationView[]> {
  return (await h.call('GET', `/v1/conversations?account=${accountId}`)).body.data as ConversationView[];
}

describe('the import when an account connects', () => {
  // Guarantee: a DM written in the minute before the account connects is imported (before, the
  // import skipped what was younger than a minute, and Meta sends no webhook for it), as history:
  // no event, not unread; Meta's earlier webhook of it, delivered again, records nothing twice.
  it('imports a DM from the minute before the connection, as history', async () => {
    const user = await sandboxUser(h, 'JustBefore');
    const pageId = user.pages[0]?.id as string;
    const text = 'written seconds before you connected';
    const dm = await h.system.sandboxControl<Delivered>('POST', `/__sandbox/pages/${pageId}/messages`, {
      from: { name: 'Last Minute' },
      text,
    });
    // The network's times are whole seconds: one of the same second as the connection is news.
    await settle(1_100);
    const w = await connectedWorkspace(h, 'JustBefore', user);
    const [conversation] = await eventually(async () => {
      const list = await conversationsOf(w.page.id);
      return list.length > 0 ? list : undefined;
    });
    expect(conversation).toMatchObject({ kind: 'dm', unread_count: 0, contact: { name: 'Last Minute' } });
    const messages = await messagesOf(h, conversation?.id as string);
    expect(messages.map((m) => [m.platform_message_id, m.text])).toEqual([[dm.message_id, text]]);

    await replay(dm.webhook.id);
    await settle();
    expect((await messagesOf(h, conversation?.id as string)).map((m) => m.platform_message_id)).toEqual([
      dm.message_id,
    ]);
    expect(await eventsAbout(h, w.workspace, 'message.received', dm.message_id)).toEqual([]);
  });
});

describe('inbox-sync', () => {
  // Guarantee: a DM that came after the account connected and whose webhook never came is stored
  // by inbox-sync and announced with message.received (GET /v1/events), unread; its webhook
  // delivered late records and announces nothing more.
  it('stores and announces a DM no webhook brought, once', async () => {
    const w = await connectedWorkspace(h, 'Synced');
    await settle();
    await withhold(w.page.platform_id, 'message');
    const text = 'did anyone get this?';
    const dm = await h.system.sandboxControl<Delivered>(
      'POST',
      `/__sandbox/pages/${w.page.platform_id}/messages`,
      {
        from: { name: 'Lost Webhook' },
        text,
      },
    );
    expect(dm.webhook.error).toBe('withheld');
    await settle();
    expect(await conversationsOf(w.page.id)).toEqual([]);

    const synced = await h.call('POST', `/v1/accounts/${w.page.id}/inbox-sync`);
    expect(synced.status).toBe(200);
    expect(synced.body).toMatchObject({ messages: 1 });
    const [event, ...more] = await eventually(async () => {
      const found = await eventsAbout(h, w.workspace, 'message.received', dm.message_id);
      return found.length > 0 ? found : undefined;
    });
    expect(more).toEqual([]);
    expect(event?.data.message).toMatchObject({ direction: 'inbound', text });
    expect(event?.data.conversation).toMatchObject({ unread_count: 1 });

    await replay(dm.webhook.id);
    await settle();
    expect(await eventsAbout(h, w.workspace, 'message.received', dm.message_id)).toHaveLength(1);
    expect((await messagesOf(h, event?.data.conversation.id as string)).map((m) => m.text)).toEqual([text]);
  });

  // Guarantee: an answer written in the network's own app a moment ago whose echo never came is
  // stored by inbox-sync as outbound (source network, from the account) and announced with
  // message.sent (before, the import left anything outbound younger than a minute out).
  it("stores and announces an answer from the network's app whose echo never came", async () => {
    const w = await connectedWorkspace(h, 'Echoless');
    const dm = await h.system.sandboxControl<Delivered & { sender_id: string }>(
      'POST',
      `/__sandbox/pages/${w.page.platform_id}/messages`,
      { from: { name: 'Asks Something' }, text: 'open tomorrow?' },
    );
    await eventually(async () => ((await conversationsOf(w.page.id)).length === 1 ? true : undefined));
    await withhold(w.page.platform_id, 'echo');
    const answer = await h.system.sandboxControl<Delivered>(
      'POST',
      `/__sandbox/pages/${w.page.platform_id}/app-messages`,
      { to: { id: dm.sender_id }, text: 'yes, from 9' },
    );
    expect(answer.webhook.error).toBe('withheld');

    const synced = await h.call('POST', `/v1/accounts/${w.page.id}/inbox-sync`);
    expect(synced.body).toMatchObject({ messages: 1 });
    const [event, ...more] = await eventually(async () => {
      const found = await eventsAbout(h, w.workspace, 'message.sent', answer.message_id);
      return found.length > 0 ? found : undefined;
    });
    expect(more).toEqual([]);
    expect(event?.data.message).toMatchObject({
      direction: 'outbound',
      source: 'network',
      text: 'yes, from 9',
      from: { id: w.page.platform_id },
    });
    await replay(answer.webhook.id);
    await settle();
    expect(await eventsAbout(h, w.workspace, 'message.sent', answer.message_id)).toHaveLength(1);
  });
});
