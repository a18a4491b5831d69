import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { type Connected, type Harness, publishBoth, startHarness } from './harness.ts';

/**
 * The control routes that send the other messaging and feed webhooks Meta documents: each one's
 * body on the wire, in Meta's shapes (facts §5.5, §5.7, §5.8).
 */
let h: Harness;
let c: Connected;
let postId: string;
let mediaId: string;
beforeAll(async () => {
  h = await startHarness();
  c = await h.connect();
  ({ postId, mediaId } = await publishBoth(h, c));
});
afterAll(() => h.close());

type Json = Record<string, unknown>;
type Sent = {
  message_id: string;
  sender_id: string;
  conversation_id: string;
  webhook: { id: string; status: number };
};

/** The last webhook's first messaging (or standby) item. */
const lastItem = (list: 'messaging' | 'standby' = 'messaging') =>
  (h.lastWebhook().entry[0] as unknown as Record<string, Json[]>)[list]?.[0] as Json;
const lastChange = () => h.lastWebhook().entry[0]?.changes?.[0]?.value;

async function personMessage(platform: 'instagram' | 'pages', body: Json): Promise<Sent> {
  const account = platform === 'instagram' ? c.igId : c.pageId;
  const res = await h.control<Sent>('POST', `/__sandbox/${platform}/${account}/message-kinds`, body);
  expect(res.status).toBe(201);
  return res.body;
}

describe('messages of every documented shape', () => {
  // Guarantee: attachments go out with the payload as documented, `"payload": null` (title and URL beside it) or no payload.
  it('sends attachments with a payload, a null payload, or none', async () => {
    const sent = await personMessage('pages', {
      from: { name: 'Jo' },
      text: 'https://example.com/menu',
      attachments: [
        { type: 'fallback', url: 'https://example.com/menu', title: 'Menu', payload: 'null' },
        { type: 'fallback', payload: 'omitted' },
        { type: 'ig_reel', url: 'https://cdn.example.com/reel.mp4', title: 'Reel' },
      ],
    });
    expect(h.lastWebhook().object).toBe('page');
    expect(lastItem()).toMatchObject({ sender: { id: sent.sender_id }, recipient: { id: c.pageId } });
    expect(lastItem().message).toEqual({
      mid: sent.message_id,
      text: 'https://example.com/menu',
      attachments: [
        { type: 'fallback', payload: null, title: 'Menu', URL: 'https://example.com/menu' },
        { type: 'fallback' },
        { type: 'ig_reel', payload: { url: 'https://cdn.example.com/reel.mp4', title: 'Reel' } },
      ],
    });
  });

  // Guarantee: story replies, replies to a message and unsupported messages carry reply_to / is_unsupported.
  it('sends story replies, replies and unsupported messages', async () => {
    const first = await personMessage('instagram', { from: { username: 'mia' }, text: 'hi' });
    const story = await personMessage('instagram', {
      from: { username: 'mia' },
      text: 'Nice',
      reply_to: { story: { id: '17900000000000042', url: 'https://cdn.example.com/story.jpg' } },
    });
    expect(lastItem().message).toEqual({
      mid: story.message_id,
      text: 'Nice',
      reply_to: { story: { url: 'https://cdn.example.com/story.jpg', id: '17900000000000042' } },
    });
    await personMessage('instagram', {
      from: { username: 'mia' },
      text: 'this',
      reply_to: { mid: first.message_id },
    });
    expect(lastItem().message).toMatchObject({ reply_to: { mid: first.message_id } });
    const odd = await personMessage('instagram', { from: { username: 'mia' }, is_unsupported: true });
    expect(lastItem().message).toEqual({ mid: odd.message_id, is_unsupported: true });
  });
});

describe('changes to a message', () => {
  // Guarantee: edit, unsend, reactions, read and delivery go out as message_edit, is_deleted, reaction, read and delivery items.
  it('sends edits, unsends, reactions, reads and deliveries', async () => {
    const sent = await personMessage('pages', { from: { name: 'Al' }, text: 'typo' });
    const mid = sent.message_id;
    const from = { sender: { id: sent.sender_id }, recipient: { id: c.pageId } };
    await h.control('POST', `/__sandbox/messages/${mid}/edit`, { text: 'fixed' });
    expect(lastItem()).toMatchObject({ ...from, message_edit: { mid, text: 'fixed', num_edit: 1 } });
    await h.control('POST', `/__sandbox/messages/${mid}/reactions`, { reaction: 'wow', emoji: '😮' });
    expect(lastItem()).toMatchObject({
      ...from,
      reaction: { mid, action: 'react', reaction: 'wow', emoji: '😮' },
    });
    await h.control('POST', `/__sandbox/messages/${mid}/reactions`, { action: 'unreact' });
    expect(lastItem().reaction).toEqual({ mid, action: 'unreact' });
    await h.control('POST', `/__sandbox/messages/${mid}/read`);
    expect(lastItem().read).toEqual({ watermark: expect.any(Number) });
    await h.control('POST', `/__sandbox/messages/${mid}/delivery`);
    expect(lastItem().delivery).toEqual({ mids: [mid], watermark: expect.any(Number) });
    await h.control('POST', `/__sandbox/messages/${mid}/unsend`);
    expect(lastItem()).toMatchObject({ ...from, message: { mid, is_deleted: true } });
    // Unsent: Graph no longer has it.
    const gone = await h.graph('GET', `/${mid}`, c.pageToken);
    expect(gone.status).toBe(400);
  });

  // Guarantee: an Instagram read names the message; Instagram has no delivery webhook.
  it('sends an Instagram read with the mid and refuses a delivery', async () => {
    const sent = await personMessage('instagram', { from: { username: 'zoe' }, text: 'seen?' });
    await h.control('POST', `/__sandbox/messages/${sent.message_id}/read`);
    expect(lastItem().read).toEqual({ mid: sent.message_id });
    const refused = await h.control('POST', `/__sandbox/messages/${sent.message_id}/delivery`);
    expect(refused.status).toBe(400);
  });
});

describe('postbacks, standby and handover', () => {
  // Guarantee: each kind goes out as Meta documents it, standby on entry.standby.
  it('sends postbacks, standby messages and handover events', async () => {
    const sent = await personMessage('pages', { from: { name: 'Bo' }, text: 'hello' });
    const events = `/__sandbox/pages/${c.pageId}/messaging-events`;
    await h.control('POST', events, { kind: 'postback', person_id: sent.sender_id });
    expect(lastItem().postback).toEqual({
      mid: expect.any(String),
      title: 'Get Started',
      payload: 'GET_STARTED',
    });
    await h.control('POST', events, { kind: 'standby', person_id: sent.sender_id, text: 'still there?' });
    expect(lastItem('standby').message).toEqual({ mid: expect.any(String), text: 'still there?' });
    await h.control('POST', events, { kind: 'pass_thread_control', person_id: sent.sender_id });
    expect(lastItem().pass_thread_control).toMatchObject({
      previous_owner_app_id: h.sandbox.world.config.appId,
    });
    const unknown = await h.control('POST', events, { kind: 'postback', person_id: '7000000000000000' });
    expect(unknown.status).toBe(404);
  });
});

describe('the Page feed', () => {
  // Guarantee: a Page comment edited, hidden, shown and removed goes out as a feed change with that verb.
  it('sends edited, hide, unhide and remove for a Page comment', async () => {
    const added = await h.control<{ id: string }>('POST', `/__sandbox/pages/posts/${postId}/comments`, {
      from: { name: 'Jane Doe' },
      text: 'Ship to Ireland?',
    });
    const id = added.body.id;
    await h.control('POST', `/__sandbox/comments/${id}/edit`, { text: 'Ship to Cork?' });
    expect(lastChange()).toMatchObject({
      item: 'comment',
      verb: 'edited',
      comment_id: id,
      post_id: postId,
      message: 'Ship to Cork?',
    });
    for (const verb of ['hide', 'unhide', 'remove']) {
      await h.control('POST', `/__sandbox/comments/${id}/${verb}`);
      expect(lastChange()).toMatchObject({ item: 'comment', verb, comment_id: id });
      expect(lastChange()).not.toHaveProperty('message');
    }
    expect((await h.control('POST', `/__sandbox/comments/${id}/hide`)).status).toBe(404);
  });

  // Guarantee: Instagram comments cannot be changed this way (Meta sends no such webhook).
  it('refuses to change an Instagram comment', async () => {
    const added = await h.control<{ id: string }>('POST', `/__sandbox/instagram/media/${mediaId}/comments`, {
      from: { username: 'fan' },
      text: 'Nice',
    });
    expect((await h.control('POST', `/__sandbox/comments/${added.body.id}/remove`)).status).toBe(400);
  });

  // Guarantee: a reaction on a Page post and a Page status go out as feed items of their kind.
  it('sends a post reaction and a status post', async () => {
    await h.control('POST', `/__sandbox/pages/posts/${postId}/reactions`, { reaction_type: 'love' });
    expect(lastChange()).toMatchObject({
      item: 'reaction',
      verb: 'add',
      post_id: postId,
      reaction_type: 'love',
    });
    const status = await h.control<{ id: string }>('POST', `/__sandbox/pages/${c.pageId}/status`, {
      message: 'Open today',
    });
    expect(status.status).toBe(201);
    expect(lastChange()).toMatchObject({
      item: 'status',
      verb: 'add',
      post_id: status.body.id,
      message: 'Open today',
      published: 1,
    });
  });
});

describe('raw webhooks', () => {
  // Guarantee: any JSON body is sent signed, as is.
  it('sends a body as given, signed', async () => {
    const body = { object: 'page', entry: [{ id: '104857600999999', time: 1, messaging: [] }] };
    const res = await h.control<{ webhook: { status: number } }>('POST', '/__sandbox/webhooks/raw', { body });
    expect(res.body.webhook.status).toBe(200);
    expect(h.lastWebhook()).toEqual(body);
    expect(h.internet.webhooks.at(-1)?.headers['x-hub-signature-256']).toMatch(/^sha256=[0-9a-f]{64}$/);
  });
});
