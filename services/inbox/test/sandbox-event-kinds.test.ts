import type { ConversationView, MessageView } from '@svc/contracts/public';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { type Connected, connectedWorkspace, type InboxHarness } from './harness.ts';
import {
  deadLetterReader,
  eventsAbout,
  eventually,
  findThread,
  messageIn,
  startBusyInbox,
} from './meta-deliveries.ts';

/**
 * The same kinds of Meta events as meta-payloads.test.ts, this time made by the graph-sandbox's
 * control API (`message-kinds`, `messages/:mid/...`, `messaging-events`, `comments/:id/...`,
 * `webhooks/raw`) and sent by it, signed, to the gateway: what a partner sees through REST and
 * `GET /v1/events`.
 */
let h: InboxHarness;
let w: Connected;

beforeAll(async () => {
  h = await startBusyInbox();
  w = await connectedWorkspace(h, 'Kinds');
}, 120_000);
afterAll(() => h?.stop());

interface Sent {
  message_id: string;
  sender_id: string;
  webhook: { id: string; status: number | null; error: string | null };
}

const control = <T = Record<string, unknown>>(path: string, body?: unknown) =>
  h.system.sandboxControl<T>('POST', path, body ?? {});
const withContact = (id: string) => (c: ConversationView) => c.contact?.id === id;

async function personSays(
  network: 'instagram' | 'pages',
  body: Record<string, unknown>,
  delivered = true,
): Promise<Sent> {
  const account = network === 'instagram' ? w.ig : w.page;
  const sent = await control<Sent>(`/__sandbox/${network}/${account.platform_id}/message-kinds`, body);
  if (delivered) expect(sent.webhook.status).toBe(200);
  return sent;
}

const settled = () => new Promise((resolve) => setTimeout(resolve, 700));

describe('messages of every shape, from the sandbox', () => {
  // Guarantee: a Messenger link share sent with `"payload": null` arrives as a message with its link.
  it('records a link share whose attachment payload is null', async () => {
    const link = 'https://example.com/menu';
    const sent = await personSays('pages', {
      from: { name: 'Linker' },
      text: link,
      attachments: [{ type: 'fallback', url: link, title: 'Menu', payload: 'null' }],
    });
    const { message } = await messageIn(
      h,
      w.page.id,
      withContact(sent.sender_id),
      sent.message_id,
      (m) => m.attachments.length > 0,
    );
    expect(message.attachments).toEqual([{ type: 'fallback', url: link, title: 'Menu' }]);
    expect(await eventsAbout(h, w.workspace, 'message.received', message.id, 1)).toHaveLength(1);
  });

  // Guarantee: story replies, replies and unsupported messages keep what they are.
  it('records a story reply, a reply and an unsupported message', async () => {
    const first = await personSays('instagram', { from: { username: 'kinds_fan' }, text: 'hi' });
    const storyUrl = 'https://cdn.example.com/story.jpg';
    const story = await personSays('instagram', {
      from: { username: 'kinds_fan' },
      text: 'Nice story',
      reply_to: { story: { id: '17900000000000042', url: storyUrl } },
    });
    const reply = await personSays('instagram', {
      from: { username: 'kinds_fan' },
      text: 'about that',
      reply_to: { mid: first.message_id },
    });
    const odd = await personSays('instagram', { from: { username: 'kinds_fan' }, is_unsupported: true });
    // What only webhooks tell is there once the last one is: a reconciliation may store a message first.
    const { thread } = await eventually(async () => {
      const found = await messageIn(
        h,
        w.ig.id,
        withContact(first.sender_id),
        odd.message_id,
        (m) => m.unsupported,
      );
      const of = (mid: string) => found.thread.messages.find((m) => m.platform_message_id === mid);
      return of(story.message_id)?.story && of(reply.message_id)?.parent ? found : undefined;
    });
    const byMid = (mid: string) => thread.messages.find((m) => m.platform_message_id === mid) as MessageView;
    expect(byMid(story.message_id).story).toEqual({ id: '17900000000000042', url: storyUrl });
    expect(byMid(reply.message_id).parent).toBe(byMid(first.message_id).id);
    expect(byMid(odd.message_id)).toMatchObject({ unsupported: true, text: null });
  });
});

describe('a webhook that comes after the message was imported', () => {
  // Guarantee: a DM stored from the network's API before its webhook came gets what only the webhook tells (its story), with message.updated.
  it('completes an imported message with what its late webhook tells', async () => {
    await control('/__sandbox/webhooks/withhold', { account_id: w.ig.platform_id, kind: 'message' });
    const url = 'https://cdn.example.com/late-story.jpg';
    const sent = await personSays(
      'instagram',
      { from: { username: 'late_fan' }, text: 'Nice', reply_to: { story: { id: '17900000000000077', url } } },
      false,
    );
    expect(sent.webhook.error).toBe('withheld');
    expect((await h.call('POST', `/v1/accounts/${w.ig.id}/inbox-sync`, {})).status).toBe(200);
    const imported = await messageIn(h, w.ig.id, withContact(sent.sender_id), sent.message_id);
    expect(imported.message.story).toBeNull();
    await control(`/__sandbox/webhooks/${sent.webhook.id}/replay`, { times: 2 });
    const completed = await messageIn(
      h,
      w.ig.id,
      withContact(sent.sender_id),
      sent.message_id,
      (m) => m.story !== null,
    );
    expect(completed.message).toMatchObject({
      id: imported.message.id,
      story: { id: '17900000000000077', url },
    });
    expect(completed.thread.messages).toHaveLength(1);
    await settled();
    const updated = await eventsAbout(h, w.workspace, 'message.updated', imported.message.id);
    expect(updated.map((e) => e.data.message.story)).toEqual([{ id: '17900000000000077', url }]);
  });
});

describe('changes made in the sandbox', () => {
  // Guarantee: an edit and an unsend change the stored message and announce message.updated.
  it('applies an edit, then an unsend', async () => {
    const sent = await personSays('pages', { from: { name: 'Editor' }, text: 'Opne today?' });
    const { message } = await messageIn(h, w.page.id, withContact(sent.sender_id), sent.message_id);
    await control(`/__sandbox/messages/${sent.message_id}/edit`, { text: 'Open today?' });
    await messageIn(
      h,
      w.page.id,
      withContact(sent.sender_id),
      sent.message_id,
      (m) => m.text === 'Open today?',
    );
    await control(`/__sandbox/messages/${sent.message_id}/unsend`);
    await messageIn(h, w.page.id, withContact(sent.sender_id), sent.message_id, (m) => m.deleted_at !== null);
    const updated = await eventually(async () => {
      const events = await eventsAbout(h, w.workspace, 'message.updated', message.id);
      return events.length === 2 ? events : undefined;
    });
    expect(updated.map((e) => e.data.message.text)).toEqual(['Open today?', null]);
  });

  // Guarantee: reactions and read receipts are recorded without messages; a delivery changes nothing.
  it('records reactions and a read receipt, and ignores a delivery', async () => {
    const sent = await personSays('pages', { from: { name: 'Reactor' }, text: 'hello' });
    await messageIn(h, w.page.id, withContact(sent.sender_id), sent.message_id);
    await control(`/__sandbox/messages/${sent.message_id}/reactions`, { reaction: 'like', emoji: '👍' });
    const reacted = await messageIn(h, w.page.id, withContact(sent.sender_id), sent.message_id, (m) =>
      m.reactions.some((r) => r.reaction === 'like'),
    );
    expect(reacted.message.reactions).toEqual([{ from: sent.sender_id, reaction: 'like', emoji: '👍' }]);
    await control(`/__sandbox/messages/${sent.message_id}/read`);
    await control(`/__sandbox/messages/${sent.message_id}/delivery`);
    const thread = await eventually(async () => {
      const found = await findThread(h, w.page.id, withContact(sent.sender_id));
      return found?.conversation.read_by_contact_at ? found : undefined;
    });
    expect(thread.messages).toHaveLength(1);
  });

  // Guarantee: postbacks, standby and handover events create no message.
  it('creates nothing for postbacks, standby and handover', async () => {
    const sent = await personSays('pages', { from: { name: 'Bot user' }, text: 'start' });
    await messageIn(h, w.page.id, withContact(sent.sender_id), sent.message_id);
    const events = `/__sandbox/pages/${w.page.platform_id}/messaging-events`;
    for (const kind of [
      'postback',
      'standby',
      'pass_thread_control',
      'take_thread_control',
      'request_thread_control',
    ])
      await control(events, { kind, person_id: sent.sender_id });
    await settled();
    const thread = await findThread(h, w.page.id, withContact(sent.sender_id));
    expect(thread?.messages).toHaveLength(1);
  });
});

describe('the Page feed, from the sandbox', () => {
  // Guarantee: a Page comment edited, hidden and removed in the sandbox is updated in the inbox.
  it('updates a comment edited, hidden and removed', async () => {
    const post = await control<{ id: string }>(`/__sandbox/pages/${w.page.platform_id}/status`, {
      message: 'Fresh bread today',
    });
    const comment = await control<{ id: string }>(`/__sandbox/pages/posts/${post.id}/comments`, {
      from: { name: 'Jane Doe' },
      text: 'Any rye?',
    });
    const onPost = (c: ConversationView) => c.object?.id === post.id;
    const added = await messageIn(h, w.page.id, onPost, comment.id);
    await control(`/__sandbox/comments/${comment.id}/edit`, { text: 'Any rye left?' });
    await messageIn(
      h,
      w.page.id,
      onPost,
      comment.id,
      (m) => m.text === 'Any rye left?' && m.edited_at !== null,
    );
    await control(`/__sandbox/comments/${comment.id}/hide`);
    await messageIn(h, w.page.id, onPost, comment.id, (m) => m.hidden);
    await control(`/__sandbox/comments/${comment.id}/remove`);
    const removed = await messageIn(h, w.page.id, onPost, comment.id, (m) => m.deleted_at !== null);
    expect(removed.message).toMatchObject({ id: added.message.id, text: null });
    const updated = await eventually(async () => {
      const events = await eventsAbout(h, w.workspace, 'message.updated', added.message.id);
      return events.length === 3 ? events : undefined;
    });
    expect(updated.at(-1)?.data.message.deleted_at).not.toBeNull();
  });

  // Guarantee: a reaction on a Page post, a status post and a body for an unknown Page create nothing.
  it('creates nothing for a post reaction, a status post or an unknown Page', async () => {
    const before = (await h.call('GET', '/v1/conversations?limit=200')).body.total as number;
    const post = await control<{ id: string }>(`/__sandbox/pages/${w.page.platform_id}/status`, {
      message: 'Hi',
    });
    await control(`/__sandbox/pages/posts/${post.id}/reactions`, { reaction_type: 'love' });
    const stranger = {
      object: 'page',
      entry: [
        {
          id: '104857600999999',
          time: Date.now(),
          messaging: [
            {
              sender: { id: '7012345678901234' },
              recipient: { id: '104857600999999' },
              timestamp: Date.now(),
              message: { mid: 'm_stranger', text: 'hello?' },
            },
          ],
        },
      ],
    };
    await control('/__sandbox/webhooks/raw', { body: stranger });
    await settled();
    expect((await h.call('GET', '/v1/conversations?limit=200')).body.total).toBe(before);
    const letters = await deadLetterReader(h);
    try {
      expect(await letters.list()).toEqual([]);
    } finally {
      await letters.close();
    }
  });
});
