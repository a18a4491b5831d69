import { answerVerificationChallenge, type GraphApiError, verifyWebhookSignature } from '@svc/graph-client';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { APP_SECRET, type Connected, connectUser, failure, type Harness, startHarness } from './harness.ts';

let h: Harness;
let c: Connected;
beforeAll(async () => {
  h = await startHarness({ sendEchoes: false });
  c = await connectUser(h);
});
afterAll(() => h.close());

type Body = Record<string, unknown> & {
  entry: {
    id: string;
    messaging?: Record<string, unknown>[];
    changes?: { field: string; value: Record<string, unknown> }[];
  }[];
};
const lastWebhook = () => {
  const received = h.internet.received.filter((r) => r.url === '/webhook').at(-1);
  if (!received) throw new Error('no webhook received');
  return { received, body: JSON.parse(received.raw.toString()) as Body };
};

describe('webhooks out', () => {
  // Guarantee: the sandbox signs the exact bytes it sends (Meta's escaping of non-ASCII and "/") and our verifier accepts them; a tampered or re-serialized body is refused.
  it('signs inbound DMs so the product verifier accepts them and rejects tampering', async () => {
    const dm = await h.control<{ sender_id: string }>('POST', `/__sandbox/instagram/${c.igId}/messages`, {
      from: { username: 'jane.doe' },
      text: 'Grüße / ok?',
    });
    expect(dm.status).toBe(201);
    const { received, body } = lastWebhook();
    const raw = received.raw.toString();
    expect(raw).toContain('Gr\\u00fc\\u00dfe \\/ ok?');
    const header = String(received.headers['x-hub-signature-256']);
    expect(verifyWebhookSignature(received.raw, header, APP_SECRET)).toBe(true);
    expect(verifyWebhookSignature(raw.replace('ok?', 'ok!'), header, APP_SECRET)).toBe(false);
    expect(verifyWebhookSignature(JSON.stringify(body), header, APP_SECRET)).toBe(false);
    expect(verifyWebhookSignature(received.raw, header, 'wrong-secret-0123456789abcdef')).toBe(false);
    expect(body).toMatchObject({
      object: 'instagram',
      entry: [
        {
          id: c.igId,
          messaging: [
            {
              sender: { id: dm.body.sender_id },
              recipient: { id: c.igId },
              message: { text: 'Grüße / ok?' },
            },
          ],
        },
      ],
    });
  });

  // Guarantee: the sandbox performs Meta's GET handshake and our pure answer function passes it; a wrong verify token fails it.
  it('passes the verification handshake with answerVerificationChallenge', async () => {
    h.internet.onVerify = (query) => answerVerificationChallenge(query, 'sandbox-verify-token');
    const ok = await h.control<{ ok: boolean }>('POST', '/__sandbox/webhooks/verify', {});
    expect(ok.body.ok).toBe(true);
    const bad = await h.control<{ ok: boolean; status: number }>('POST', '/__sandbox/webhooks/verify', {
      verify_token: 'other',
    });
    expect(bad.body).toMatchObject({ ok: false, status: 403 });
  });
});

describe('Instagram and Messenger inbox', () => {
  // Guarantee: an inbound DM creates a conversation readable by user_id, and a reply inside 24 h is sent and logged.
  it('reads the conversation and replies inside the window', async () => {
    const dm = await h.control<{ sender_id: string; conversation_id: string }>(
      'POST',
      `/__sandbox/instagram/${c.igId}/messages`,
      { from: { username: 'sam' }, text: 'Open Sunday?' },
    );
    const list = await h.client.inbox.conversations(c.pageToken, c.pageId, {
      platform: 'instagram',
      userId: dm.body.sender_id,
    });
    expect(list.data).toHaveLength(1);
    expect(list.data[0]?.messages?.data[0]).toMatchObject({
      message: 'Open Sunday?',
      from: { username: 'sam', id: dm.body.sender_id },
    });
    const sent = await h.client.inbox.send(c.pageToken, c.pageId, {
      recipientId: dm.body.sender_id,
      text: 'Yes, 9 to 1',
    });
    expect(sent.recipient_id).toBe(dm.body.sender_id);
    const message = await h.client.inbox.message(c.pageToken, sent.message_id ?? '');
    expect(message).toMatchObject({ message: 'Yes, 9 to 1', from: { id: c.igId } });
    const log = await h.control<{ data: { type: string; text: string }[] }>('GET', '/__sandbox/sent');
    expect(log.body.data.at(-1)).toMatchObject({
      type: 'message',
      network: 'instagram',
      text: 'Yes, 9 to 1',
    });
  });

  // Guarantee: after 24 h a send fails with the platform's window error (IG 10/2534022, Messenger 10/2018278); HUMAN_AGENT still works within 7 days.
  it('enforces the 24-hour window per platform', async () => {
    const ig = await h.control<{ sender_id: string }>('POST', `/__sandbox/instagram/${c.igId}/messages`, {
      from: { username: 'late' },
      text: 'hi',
    });
    const fb = await h.control<{ sender_id: string }>('POST', `/__sandbox/pages/${c.pageId}/messages`, {
      from: { name: 'Jo Doe' },
      text: 'hi',
    });
    expect(lastWebhook().body).toMatchObject({ object: 'page', entry: [{ id: c.pageId }] });
    await h.control('POST', '/__sandbox/clock', { advance_seconds: 25 * 3600 });
    const igError = await failure<GraphApiError>(() =>
      h.client.inbox.send(c.pageToken, c.pageId, { recipientId: ig.body.sender_id, text: 'late' }),
    );
    expect(igError.details).toMatchObject({ code: 10, subcode: 2534022 });
    expect(igError.kind).toBe('messaging_window');
    const fbError = await failure<GraphApiError>(() =>
      h.client.inbox.send(c.pageToken, c.pageId, {
        recipientId: fb.body.sender_id,
        text: 'late',
        messagingType: 'RESPONSE',
      }),
    );
    expect(fbError.details).toMatchObject({ code: 10, subcode: 2018278 });
    const human = await h.client.inbox.send(c.pageToken, c.pageId, {
      recipientId: fb.body.sender_id,
      text: 'agent',
      messagingType: 'MESSAGE_TAG',
      tag: 'HUMAN_AGENT',
    });
    expect(human.message_id).toMatch(/^m_/);
  });
});

describe('comments and private replies', () => {
  // Guarantee: an inbound IG comment sends Meta's comments webhook; the product can read it, reply to it, and send one private reply only.
  it('handles Instagram comments, replies and a single private reply', async () => {
    const { id: container } = await h.client.instagram.createImageContainer(c.pageToken, c.igId, {
      imageUrl: `${h.internet.url}/img/square.jpg`,
    });
    const media = await h.client.instagram.publish(c.pageToken, c.igId, container);
    const inbound = await h.control<{ id: string }>(
      'POST',
      `/__sandbox/instagram/media/${media.id}/comments`,
      { from: { username: 'fan' }, text: 'Gluten free?' },
    );
    expect(lastWebhook().body.entry[0]?.changes?.[0]).toMatchObject({
      field: 'comments',
      value: { id: inbound.body.id, text: 'Gluten free?', media: { id: media.id } },
    });
    const comments = await h.client.inbox.instagramComments(c.pageToken, media.id);
    expect(comments.data.map((x) => x.id)).toEqual([inbound.body.id]);
    const reply = await h.client.inbox.replyToInstagramComment(c.pageToken, inbound.body.id, 'Yes!');
    expect(lastWebhook().body.entry[0]?.changes?.[0]?.value).toMatchObject({
      id: reply.id,
      parent_id: inbound.body.id,
      from: { id: c.igId, self_ig_scoped_id: c.igId },
    });
    expect((await h.client.inbox.instagramReplies(c.pageToken, inbound.body.id)).data[0]?.text).toBe('Yes!');
    const dm = await h.client.inbox.privateReply(c.pageToken, c.pageId, {
      commentId: inbound.body.id,
      text: 'Details in DM',
    });
    expect(dm.message_id).toBeTruthy();
    const twice = await failure<GraphApiError>(() =>
      h.client.inbox.privateReply(c.pageToken, c.pageId, { commentId: inbound.body.id, text: 'again' }),
    );
    expect(twice.details).toMatchObject({ code: 100, subcode: 2534025 });
  });

  // Guarantee: a comment on a Page post sends the feed webhook; the Page replies to it and the reply is in the sent log.
  it('handles Page post comments and replies', async () => {
    const post = await h.client.pages.postToFeed(c.pageToken, c.pageId, { message: 'New menu' });
    const inbound = await h.control<{ id: string }>('POST', `/__sandbox/pages/posts/${post.id}/comments`, {
      from: { name: 'Jane Doe' },
      text: 'Ship to Ireland?',
    });
    expect(lastWebhook().body.entry[0]?.changes?.[0]).toMatchObject({
      field: 'feed',
      value: {
        item: 'comment',
        verb: 'add',
        comment_id: inbound.body.id,
        post_id: post.id,
        parent_id: post.id,
      },
    });
    expect((await h.client.inbox.pageComments(c.pageToken, post.id)).data[0]).toMatchObject({
      id: inbound.body.id,
      message: 'Ship to Ireland?',
    });
    const reply = await h.client.inbox.commentOnPageObject(c.pageToken, inbound.body.id, 'We do');
    expect((await h.client.inbox.pageComments(c.pageToken, inbound.body.id)).data.map((x) => x.id)).toEqual([
      reply.id,
    ]);
    const log = await h.control<{ data: { type: string; id: string }[] }>('GET', '/__sandbox/sent');
    expect(log.body.data.at(-1)).toMatchObject({ type: 'comment_reply', id: reply.id });
  });
});
