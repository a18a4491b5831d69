import type { ConversationView, MessageView } from '@svc/contracts/public';
import { api, eventually } from '@svc/testing';
import sharp from 'sharp';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import {
  type Connected,
  connectedWorkspace,
  dataOf,
  type InboxHarness,
  sandboxUser,
  startInbox,
} from './harness.ts';

/**
 * Sending end to end against the sandbox: DMs inside and outside the messaging window, the
 * human_agent tag, idempotent sends and their echoes, the network's refusals, comment replies and
 * private replies on our own published post, history import, scope and purge.
 */
let h: InboxHarness;
let w: Connected;

beforeAll(async () => {
  h = await startInbox();
  w = await connectedWorkspace(h, 'Sending');
});
afterAll(() => h.stop());

const HOUR = 3600;

/** A DM from a new person to the account; answers its conversation id once recorded. */
async function dmFrom(name: string, account = w.ig, path = 'instagram'): Promise<string> {
  const sent = await h.system.sandboxControl<{ message_id: string }>(
    'POST',
    `/__sandbox/${path}/${account.platform_id}/messages`,
    { from: { username: name, name }, text: `hi from ${name}` },
  );
  return eventually(() => {
    const event = h.recorder
      .ofType('message.received')
      .find((e) => dataOf(e).message.platform_message_id === sent.message_id);
    if (!event) throw new Error('not recorded yet');
    return dataOf(event).conversation.id as string;
  });
}

const sentLog = async () =>
  (
    await h.system.sandboxControl<{ data: { text: string | null; type: string; tag: string | null }[] }>(
      'GET',
      '/__sandbox/sent',
    )
  ).data;

describe('direct messages', () => {
  // Guarantee: a send inside the window reaches the person once, is recorded once (its echo
  // included) and is announced once with source api.
  it('sends inside the window, once, whatever the echo does', async () => {
    const conversation = await dmFrom('window_open');
    const sent = await h.call('POST', `/v1/conversations/${conversation}/messages`, { text: 'We open at 9' });
    expect(sent.status).toBe(201);
    expect(sent.body).toMatchObject({
      direction: 'outbound',
      kind: 'message',
      source: 'api',
      text: 'We open at 9',
    });
    expect(sent.body.platform_message_id).toEqual(expect.any(String));
    await eventually(async () => {
      const events = h.recorder.ofType('message.sent').filter((e) => dataOf(e).message.id === sent.body.id);
      expect(events).toHaveLength(1);
      return true;
    });
    await new Promise((resolve) => setTimeout(resolve, 300));
    const messages = (await h.call('GET', `/v1/conversations/${conversation}/messages`)).body
      .data as MessageView[];
    expect(messages.filter((m) => m.text === 'We open at 9')).toHaveLength(1);
    expect((await sentLog()).filter((s) => s.text === 'We open at 9')).toHaveLength(1);
  });

  // Guarantee: a retried send with the same Idempotency-Key never reaches the person twice.
  it('answers a retry with the same message and sends nothing again', async () => {
    const conversation = await dmFrom('retrying');
    const headers = { 'idempotency-key': `send-${conversation}` };
    const body = { text: 'Only once please' };
    const first = await h.call('POST', `/v1/conversations/${conversation}/messages`, body, headers);
    const again = await h.call('POST', `/v1/conversations/${conversation}/messages`, body, headers);
    expect(first.status).toBe(201);
    expect(again.status).toBe(201);
    expect(again.body.id).toBe(first.body.id);
    const other = await h.call(
      'POST',
      `/v1/conversations/${conversation}/messages`,
      { text: 'else' },
      headers,
    );
    expect(other.status).toBe(409);
    expect((await sentLog()).filter((s) => s.text === 'Only once please')).toHaveLength(1);
  });

  // Guarantee: outside the 24 h window a send is refused before the network (409 saying when);
  // human_agent sends within 7 days, with the tag; after 7 days that is refused too.
  it('refuses outside the window and sends with human_agent within 7 days', async () => {
    const conversation = await dmFrom('window_closing');
    await h.clock.advance(h.system, 25 * HOUR);
    const view = (await h.call('GET', `/v1/conversations/${conversation}`)).body;
    expect(view.reply_window.open).toBe(false);
    const refused = await h.call('POST', `/v1/conversations/${conversation}/messages`, { text: 'late' });
    expect(refused.status).toBe(409);
    expect(refused.body.error.code).toBe('conflict');
    expect(refused.body.error.message).toContain(view.reply_window.closes_at);
    const tagged = await h.call('POST', `/v1/conversations/${conversation}/messages`, {
      text: 'an agent here',
      tag: 'human_agent',
    });
    expect(tagged.status).toBe(201);
    expect((await sentLog()).find((s) => s.text === 'an agent here')?.tag).toBe('HUMAN_AGENT');
    await h.clock.advance(h.system, 7 * 24 * HOUR);
    const tooLate = await h.call('POST', `/v1/conversations/${conversation}/messages`, {
      text: 'too late',
      tag: 'human_agent',
    });
    expect(tooLate.status).toBe(409);
  });

  // Guarantee: the network's refusal is a 502 carrying its error, and nothing is recorded.
  it('answers the network refusal with 502 and its details', async () => {
    const conversation = await dmFrom('refused');
    await h.system.sandboxControl('POST', '/__sandbox/faults', {
      method: 'POST',
      path: '/*/messages',
      times: 1,
      status: 400,
      error: { code: 551, message: "This person isn't available right now." },
    });
    const refused = await h.call('POST', `/v1/conversations/${conversation}/messages`, { text: 'blocked?' });
    expect(refused.status).toBe(502);
    expect(refused.body.error).toMatchObject({ code: 'network_error', details: { code: 551 } });
    const messages = (await h.call('GET', `/v1/conversations/${conversation}/messages`)).body
      .data as MessageView[];
    expect(messages.map((m) => m.text)).not.toContain('blocked?');
  });

  // Guarantee: text limits are checked before sending, with the field named.
  it('refuses text over the network limit with 400 naming text', async () => {
    const conversation = await dmFrom('long_text');
    const refused = await h.call('POST', `/v1/conversations/${conversation}/messages`, {
      text: 'é'.repeat(600),
    });
    expect(refused.status).toBe(400);
    expect(refused.body.error).toMatchObject({ code: 'validation_error', field: 'text' });
  });
});

describe('comment threads on our own post', () => {
  // Guarantee: comments on a post we published form a thread naming the post; a public reply, a
  // new comment and one private reply go out; a second private reply and one after 7 days are refused.
  it('replies publicly, comments, and sends the one private reply', async () => {
    const post = await h.call('POST', '/v1/posts?wait=true', {
      workspace: w.workspace,
      caption: 'Fresh bread',
      targets: [w.page.id],
    });
    expect(post.body.status).toBe('published');
    const objectId = post.body.targets[0].platform_post_id as string;
    const comment = await h.system.sandboxControl<{ id: string }>(
      'POST',
      `/__sandbox/pages/posts/${objectId}/comments`,
      { from: { name: 'Jane Doe' }, text: 'Do you ship to Ireland?' },
    );
    const received = await eventually(() => {
      const found = h.recorder
        .ofType('comment.received')
        .find((e) => dataOf(e).message.platform_message_id === comment.id);
      if (!found) throw new Error('no comment yet');
      return dataOf(found);
    });
    expect(received.conversation).toMatchObject({
      kind: 'comments',
      object: { id: objectId, post: post.body.id },
    });
    expect(received.message.private_reply?.state).toBe('available');
    const thread = received.conversation.id as string;

    const reply = await h.call('POST', `/v1/conversations/${thread}/messages`, {
      text: 'Yes, we do!',
      reply_to: received.message.id,
    });
    expect(reply.status).toBe(201);
    expect(reply.body).toMatchObject({ kind: 'reply', parent: received.message.id, direction: 'outbound' });
    const fresh = await h.call('POST', `/v1/conversations/${thread}/messages`, { text: 'Thanks all' });
    expect(fresh.status).toBe(201);
    expect(fresh.body.kind).toBe('comment');

    const privately = await h.call('POST', `/v1/messages/${received.message.id}/private-reply`, {
      text: 'DM us',
    });
    expect(privately.status).toBe(201);
    expect(privately.body).toMatchObject({ kind: 'private_reply', direction: 'outbound', source: 'api' });
    const dm = (await h.call('GET', `/v1/conversations/${privately.body.conversation}`)).body;
    expect(dm.kind).toBe('dm');
    const again = await h.call('POST', `/v1/messages/${received.message.id}/private-reply`, {
      text: 'again',
    });
    expect(again.status).toBe(409);
    const list = (await h.call('GET', `/v1/conversations/${thread}/messages`)).body.data as MessageView[];
    const original = list.find((m) => m.id === received.message.id);
    expect(original?.private_reply).toMatchObject({ state: 'sent', message: 'DM us' });

    const later = await h.system.sandboxControl<{ id: string }>(
      'POST',
      `/__sandbox/pages/posts/${objectId}/comments`,
      {
        from: { name: 'Late Fan' },
        text: 'still open?',
      },
    );
    const late = await eventually(() => {
      const found = h.recorder
        .ofType('comment.received')
        .find((e) => dataOf(e).message.platform_message_id === later.id);
      if (!found) throw new Error('no comment yet');
      return dataOf(found).message.id as string;
    });
    await h.clock.advance(h.system, 8 * 24 * HOUR);
    const expired = await h.call('POST', `/v1/messages/${late}/private-reply`, { text: 'too late' });
    expect(expired.status).toBe(409);
    const dmMessage = await h.call('POST', `/v1/messages/${privately.body.id}/private-reply`, { text: 'x' });
    expect(dmMessage.status).toBe(400);
    expect(dmMessage.body.error.code).toBe('unsupported');
  });
});

describe('history import', () => {
  // Guarantee: connecting imports what was written before (no events for history), and an
  // import on demand, run twice, duplicates nothing.
  it('imports history on connect and again on demand without duplicates or events', async () => {
    const user = await sandboxUser(h, 'History');
    const page = user.pages[0]?.id as string;
    const old = await h.system.sandboxControl<{ message_id: string }>(
      'POST',
      `/__sandbox/pages/${page}/messages`,
      {
        from: { name: 'Early Bird' },
        text: 'written before you connected',
      },
    );
    await h.clock.advance(h.system, 120);
    const connected = await connectedWorkspace(h, 'History', user);
    const imported = await eventually(async () => {
      const list = (await h.call('GET', `/v1/conversations?account=${connected.page.id}`)).body
        .data as MessageView[];
      expect(list).toHaveLength(1);
      return list[0];
    });
    expect(imported).toMatchObject({ kind: 'dm', unread_count: 0, contact: { name: 'Early Bird' } });
    const again = await h.call('POST', `/v1/accounts/${connected.page.id}/inbox-sync`);
    const twice = await h.call('POST', `/v1/accounts/${connected.page.id}/inbox-sync`);
    expect(again.status).toBe(200);
    expect(again.body).toEqual({ conversations: 1, messages: 0 });
    expect(twice.body.messages).toBe(0);
    const messages = (await h.call('GET', `/v1/conversations/${imported.id}/messages`)).body
      .data as MessageView[];
    expect(messages.map((m) => m.platform_message_id)).toEqual([old.message_id]);
    const announced = h.recorder.events.filter(
      (e) => dataOf(e).message?.platform_message_id === old.message_id,
    );
    expect(announced).toHaveLength(0);
  });
});

describe('scope and purge', () => {
  // Guarantee: another workspace's key sees 404 for this workspace's conversation; a deleted
  // workspace's conversations are gone.
  it('hides conversations from other workspaces and purges them with the workspace', async () => {
    const conversation = await dmFrom('scoped');
    const other = (await h.call('POST', '/v1/workspaces', { name: 'Other' })).body.id as string;
    const otherKey = (await h.call('POST', `/v1/workspaces/${other}/keys`, { label: 'other' })).body
      .key as string;
    const outsider = api(h.system.gatewayUrl, otherKey);
    expect((await outsider('GET', `/v1/conversations/${conversation}`)).status).toBe(404);
    expect((await outsider('POST', `/v1/conversations/${conversation}/messages`, { text: 'x' })).status).toBe(
      404,
    );
    const own = (await h.call('POST', `/v1/workspaces/${w.workspace}/keys`, { label: 'own' })).body
      .key as string;
    expect((await api(h.system.gatewayUrl, own)('GET', `/v1/conversations/${conversation}`)).status).toBe(
      200,
    );

    const gone = await connectedWorkspace(h, 'Purged');
    const purgedConversation = await dmFrom('purged', gone.ig);
    expect((await h.call('DELETE', `/v1/workspaces/${gone.workspace}`)).status).toBe(204);
    await eventually(async () =>
      expect((await h.call('GET', `/v1/conversations/${purgedConversation}`)).status).toBe(404),
    );
  });
});

describe('attachments and Instagram comment threads', () => {
  // Guarantee: an image from the media library goes as an attachment the network fetches.
  it('sends an image from the media library as a DM attachment', async () => {
    const conversation = await dmFrom('wants_a_photo');
    const media = await uploadSquare(64);
    const sent = await h.call('POST', `/v1/conversations/${conversation}/messages`, { media: [media] });
    expect(sent.status).toBe(201);
    expect(sent.body.attachments).toEqual([expect.objectContaining({ type: 'image', mime: 'image/jpeg' })]);
    const log = await h.system.sandboxControl<{ data: { attachment_url: string | null; id: string }[] }>(
      'GET',
      '/__sandbox/sent',
    );
    expect(log.data.find((s) => s.id === sent.body.platform_message_id)?.attachment_url).toContain(
      '/media-files/',
    );
    const both = await h.call('POST', `/v1/conversations/${conversation}/messages`, {
      text: 'x',
      media: [media],
    });
    expect(both.status).toBe(400);
    expect(both.body.error.field).toBe('media');
  });

  // Guarantee: on Instagram, a comment and a reply to it form one thread; our public reply to
  // the reply answers the top-level comment, as the network requires.
  it('threads Instagram comments and answers a reply on its top-level comment', async () => {
    const post = await h.call('POST', '/v1/posts?wait=true', {
      workspace: w.workspace,
      caption: 'Croissants',
      media: [await uploadSquare()],
      targets: [w.ig.id],
    });
    expect(post.body.status).toBe('published');
    const mediaId = post.body.targets[0].platform_post_id as string;
    const top = await h.system.sandboxControl<{ id: string }>(
      'POST',
      `/__sandbox/instagram/media/${mediaId}/comments`,
      {
        from: { username: 'fan_one' },
        text: 'Gluten free?',
      },
    );
    const reply = await h.system.sandboxControl<{ id: string }>(
      'POST',
      `/__sandbox/instagram/media/${mediaId}/comments`,
      {
        from: { username: 'fan_two' },
        text: 'Asking too',
        parent_id: top.id,
      },
    );
    const received = await eventually(() => {
      const found = h.recorder
        .ofType('comment.received')
        .find((e) => dataOf(e).message.platform_message_id === reply.id);
      return found ? dataOf(found) : undefined;
    });
    expect(received.message).toMatchObject({ kind: 'reply', from: { handle: 'fan_two' } });
    expect(received.conversation).toMatchObject({
      kind: 'comments',
      object: { id: mediaId, post: post.body.id },
    });
    const answer = await h.call('POST', `/v1/conversations/${received.conversation.id}/messages`, {
      text: 'Yes, all of them',
      reply_to: received.message.id,
    });
    expect(answer.status).toBe(201);
    const parent = (
      await h.call('GET', `/v1/conversations/${received.conversation.id}/messages`)
    ).body.data.find((m: MessageView) => m.platform_message_id === top.id) as MessageView;
    expect(answer.body.parent).toBe(parent.id);
    const sent = (await sentLog()).find((s) => s.text === 'Yes, all of them') as unknown as {
      object_id: string;
    };
    expect(sent.object_id).toBe(top.id);
  });
});

/** A square JPEG in the workspace's media library. */
async function uploadSquare(size = 1080): Promise<string> {
  const image = await sharp({ create: { width: size, height: size, channels: 3, background: '#48c' } })
    .jpeg()
    .toBuffer();
  const form = new FormData();
  form.append('workspace', w.workspace);
  form.append('file', new Blob([new Uint8Array(image)]), 'square.jpg');
  const response = await fetch(`${h.system.gatewayUrl}/v1/media`, {
    method: 'POST',
    headers: { authorization: `Bearer ${h.key}` },
    body: form,
  });
  return ((await response.json()) as { id: string }).id;
}

describe('history of comments, and accounts that go', () => {
  // Guarantee: connecting imports the comments of the account's recent objects (no events), and
  // deleting an account keeps its conversations and messages.
  it('imports recent comments when another workspace connects the Page, and keeps history after delete', async () => {
    const user = await sandboxUser(h, 'Commented');
    const first = await connectedWorkspace(h, 'Commented', user);
    const post = await h.call('POST', '/v1/posts?wait=true', {
      workspace: first.workspace,
      caption: 'Our new shop',
      targets: [first.page.id],
    });
    const objectId = post.body.targets[0].platform_post_id as string;
    const comment = await h.system.sandboxControl<{ id: string }>(
      'POST',
      `/__sandbox/pages/posts/${objectId}/comments`,
      {
        from: { name: 'Early Commenter' },
        text: 'Congratulations!',
      },
    );
    await h.clock.advance(h.system, 120);
    const second = await connectedWorkspace(h, 'Second', user);
    const thread = await eventually(async () => {
      const list = (await h.call('GET', `/v1/conversations?account=${second.page.id}&kind=comments`)).body
        .data as ConversationView[];
      return list.find((c) => c.object?.id === objectId);
    });
    const messages = (await h.call('GET', `/v1/conversations/${thread.id}/messages`)).body
      .data as MessageView[];
    expect(messages.map((m) => [m.platform_message_id, m.kind, m.text])).toEqual([
      [comment.id, 'comment', 'Congratulations!'],
    ]);
    expect(
      h.recorder.events.filter((e) => e.workspace === second.workspace && e.type === 'comment.received'),
    ).toEqual([]);

    expect((await h.call('DELETE', `/v1/accounts/${second.page.id}`)).status).toBe(204);
    const kept = await h.call('GET', `/v1/conversations/${thread.id}`);
    expect(kept.status).toBe(200);
    expect((await h.call('GET', `/v1/conversations/${thread.id}/messages`)).body.data).toHaveLength(1);
  });
});

describe('while the network is down', () => {
  // Guarantee: a send the breaker held back is refused as not sent: no pending record holds its
  // Idempotency-Key (a retry with it goes through once the network is back), and it reaches the
  // person once.
  it('refuses a send held back by the breaker as not sent', async () => {
    const conversation = await dmFrom('outage');
    const path = `/v1/conversations/${conversation}/messages`;
    const key = { 'idempotency-key': 'outage-held-1' };
    await h.system.sandboxControl('POST', '/__sandbox/config', { outage: { status: 503 } });
    try {
      // Meta answers 503 to both (three tries each): the breaker opens on the second.
      for (const text of ['down 1', 'down 2'])
        expect((await h.call('POST', path, { text })).status).toBe(502);
      const held = await h.call('POST', path, { text: 'held back' }, key);
      expect(held.status).toBe(502);
      expect(held.body.error.code).toBe('network_error');
      expect(held.body.error.message).toMatch(/not sent/);
      expect(held.body.error.message).not.toMatch(/may still arrive/);
    } finally {
      await h.system.sandboxControl('POST', '/__sandbox/config', { outage: null });
    }
    // The breaker lets a probe through within its cooldown (5 s) once Meta answers again.
    let retried = await h.call('POST', path, { text: 'held back' }, key);
    for (let tries = 0; retried.status === 502 && tries < 30; tries++) {
      await new Promise((resolve) => setTimeout(resolve, 500));
      retried = await h.call('POST', path, { text: 'held back' }, key);
    }
    expect(retried.status).toBe(201);
    expect(retried.body.text).toBe('held back');
    expect((await sentLog()).filter((s) => s.text === 'held back')).toHaveLength(1);
  });
});
