import type { ConversationView, MessageView } from '@svc/contracts/public';
import { metaJson, signatureHeaders } from '@svc/graph-sandbox';
import { eventually } from '@svc/testing';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import {
  type Connected,
  connectedWorkspace,
  connectUser,
  dataOf,
  type InboxHarness,
  startInbox,
} from './harness.ts';

/**
 * Accounts that are not active (expired, revoked, in error) take no webhooks: nothing is recorded
 * or announced for them. When they are active again, the history import brings what arrived
 * meanwhile and announces it, once.
 */
const APP_SECRET = 'sandbox-app-secret-0123456789abcdef';
const DROPPED = 'webhook dropped: the account is not active';

let h: InboxHarness;

beforeAll(async () => {
  h = await startInbox();
});
afterAll(() => h.stop());

type Sent = { message_id: string; webhook: { id: string } };

async function statusBecomes(accountId: string, status: string): Promise<void> {
  await eventually(async () => {
    const account = await h.call('GET', `/v1/accounts/${accountId}`);
    return account.body.status === status ? true : undefined;
  });
}

/** The intake's line for a webhook it dropped: the account and its status, never the payload. */
async function droppedFor(accountId: string, status: string, text: string): Promise<void> {
  const line = await eventually(() =>
    h.system.logs.find((l) => l.msg === DROPPED && l.account === accountId && l.status === status),
  );
  expect(JSON.stringify(line)).not.toContain(text);
}

/** Every event, of any type, about this network message. */
const eventsAbout = (platformId: string) =>
  h.recorder.events.filter(
    (e) => (e.data as { message?: MessageView }).message?.platform_message_id === platformId,
  );

async function conversationsOf(accountId: string): Promise<ConversationView[]> {
  return (await h.call('GET', `/v1/conversations?account=${accountId}`)).body.data as ConversationView[];
}

/** Long enough for a webhook or an event still on its way to have arrived. */
const settle = () => new Promise((resolve) => setTimeout(resolve, 500));

/** Meta's permissions webhook: the user granted or revoked one permission. */
async function permission(w: Connected, scope: string, verb: 'granted' | 'revoked'): Promise<void> {
  const body = metaJson({
    object: 'permissions',
    entry: [{ id: w.user.user.id, time: 1, changes: [{ field: scope, value: { verb } }] }],
  });
  const answer = await fetch(`${h.system.gatewayUrl}/webhooks/meta`, {
    method: 'POST',
    headers: { 'content-type': 'application/json', ...signatureHeaders(APP_SECRET, body) },
    body,
  });
  expect(answer.status).toBe(200);
}

describe('a revoked account', () => {
  // Guarantee: a DM to a revoked account records nothing and emits nothing; once the account
  // reconnects, the DM is imported and message.received is emitted for it exactly once, even
  // when its webhook comes again.
  it('drops its DMs, and brings them back with one event when it reconnects', async () => {
    const w = await connectedWorkspace(h, 'Revoked');
    await h.system.sandboxControl('POST', `/__sandbox/users/${w.user.user.id}/deauthorize`);
    await statusBecomes(w.page.id, 'revoked');
    const text = 'anyone there while you are away?';
    const sent = await h.system.sandboxControl<Sent>(
      'POST',
      `/__sandbox/pages/${w.page.platform_id}/messages`,
      {
        from: { name: 'Patient Person' },
        text,
      },
    );
    await droppedFor(w.page.id, 'revoked', text);
    await settle();
    expect(eventsAbout(sent.message_id)).toEqual([]);
    expect(await conversationsOf(w.page.id)).toEqual([]);

    await connectUser(h, w.workspace, w.user);
    const event = await eventually(() =>
      h.recorder
        .ofType('message.received')
        .find((e) => dataOf(e).message.platform_message_id === sent.message_id),
    );
    expect(event.workspace).toBe(w.workspace);
    expect(dataOf(event).message).toMatchObject({ direction: 'inbound', kind: 'message', text });
    await h.system.sandboxControl('POST', `/__sandbox/webhooks/${sent.webhook.id}/replay`, { times: 1 });
    await settle();
    expect(eventsAbout(sent.message_id)).toHaveLength(1);
    const [conversation] = await conversationsOf(w.page.id);
    expect(conversation).toMatchObject({ id: dataOf(event).conversation.id, unread_count: 1 });
    const messages = (await h.call('GET', `/v1/conversations/${conversation?.id}/messages`)).body
      .data as MessageView[];
    expect(messages.map((m) => m.platform_message_id)).toEqual([sent.message_id]);
  });
});

describe('an expired account', () => {
  // Guarantee: a comment on an expired account's post records nothing and emits nothing; once the
  // account reconnects, it is imported with comment.received, in the thread of our post.
  it('drops comments on its posts, and brings them back when it reconnects', async () => {
    const w = await connectedWorkspace(h, 'Expired');
    const post = await h.call('POST', '/v1/posts?wait=true', {
      workspace: w.workspace,
      caption: 'Opening soon',
      targets: [w.page.id],
    });
    expect(post.body.status).toBe('published');
    const objectId = post.body.targets[0].platform_post_id as string;
    await h.system.sandboxControl('POST', `/__sandbox/users/${w.user.user.id}/expire-tokens`);
    expect((await h.call('POST', `/v1/accounts/${w.page.id}/refresh`)).status).toBe(502);
    await statusBecomes(w.page.id, 'expired');
    const text = 'When do you open?';
    const comment = await h.system.sandboxControl<{ id: string }>(
      'POST',
      `/__sandbox/pages/posts/${objectId}/comments`,
      { from: { name: 'Early Visitor' }, text },
    );
    await droppedFor(w.page.id, 'expired', text);
    await settle();
    expect(eventsAbout(comment.id)).toEqual([]);
    expect(await conversationsOf(w.page.id)).toEqual([]);

    await connectUser(h, w.workspace, w.user);
    const received = await eventually(() =>
      h.recorder.ofType('comment.received').find((e) => dataOf(e).message.platform_message_id === comment.id),
    );
    expect(dataOf(received).conversation).toMatchObject({
      kind: 'comments',
      object: { id: objectId, post: post.body.id },
    });
    await settle();
    expect(eventsAbout(comment.id)).toHaveLength(1);
  });
});

describe('an account in error', () => {
  // Guarantee: an account that goes to error is refused within moments of the change (not after
  // the directory's minute of memory), and when it is active again without a reconnect (the
  // permission granted again), what it missed is imported and announced once.
  it('is refused as soon as it is in error, and catches up when it is active again', async () => {
    const w = await connectedWorkspace(h, 'Erring');
    const dm = (text: string) =>
      h.system.sandboxControl<Sent>('POST', `/__sandbox/instagram/${w.ig.platform_id}/messages`, {
        from: { username: 'steady_fan' },
        text,
      });
    const before = await dm('before the change');
    await eventually(() =>
      h.recorder
        .ofType('message.received')
        .find((e) => dataOf(e).message.platform_message_id === before.message_id),
    );
    await permission(w, 'instagram_manage_messages', 'revoked');
    await statusBecomes(w.ig.id, 'error');
    const text = 'are you still there?';
    const during = await dm(text);
    await droppedFor(w.ig.id, 'error', text);
    await settle();
    expect(eventsAbout(during.message_id)).toEqual([]);

    await permission(w, 'instagram_manage_messages', 'granted');
    await statusBecomes(w.ig.id, 'active');
    const event = await eventually(() =>
      h.recorder
        .ofType('message.received')
        .find((e) => dataOf(e).message.platform_message_id === during.message_id),
    );
    expect(dataOf(event).message.text).toBe(text);
    await settle();
    expect(eventsAbout(during.message_id)).toHaveLength(1);
    expect(eventsAbout(before.message_id)).toHaveLength(1);
  });
});
