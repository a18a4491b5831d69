import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { type Connected, eventually, type Harness, startHarness, type WebhookBody } from './harness.ts';

let h: Harness;
let c: Connected;
let igsid: string;
let psid: string;
beforeAll(async () => {
  h = await startHarness();
  c = await h.connect();
  igsid = (
    await h.control<{ sender_id: string }>('POST', `/__sandbox/instagram/${c.igId}/messages`, {
      from: { username: 'pics' },
      text: 'hi',
    })
  ).body.sender_id;
  psid = (
    await h.control<{ sender_id: string }>('POST', `/__sandbox/pages/${c.pageId}/messages`, {
      from: { name: 'Pic Fan' },
      text: 'hi',
    })
  ).body.sender_id;
});
afterAll(() => h.close());

type GraphError = { error: { code: number; error_subcode?: number; message: string } };
type Sent = { recipient_id: string; message_id: string; attachment_id?: string };
type SentEntry = {
  id: string;
  text: string | null;
  attachment_url: string | null;
  tag: string | null;
  webhook_id: string | null;
};

const sendImage = (
  recipient: string,
  payload: Record<string, unknown>,
  extra: Record<string, unknown> = {},
) =>
  h.graph<Sent & GraphError>('POST', `/${c.pageId}/messages`, c.pageToken, {
    json: { recipient: { id: recipient }, message: { attachment: { type: 'image', payload } }, ...extra },
  });
const sentEntry = async (id: string) =>
  (await h.control<{ data: SentEntry[] }>('GET', '/__sandbox/sent')).body.data.find((e) => e.id === id);
const echoOf = async (mid: string) => {
  const has = (raw: Buffer) => raw.toString().includes(mid);
  await eventually(() => h.internet.webhooks.some((w) => has(w.raw)));
  return JSON.parse(h.internet.webhooks.find((w) => has(w.raw))?.raw.toString() ?? '{}') as WebhookBody;
};

describe('inbound attachments (control API)', () => {
  // Guarantee: an attachment-only inbound DM carries message.attachments[{type, payload:{url}}] and no text in the webhook, and GET /{message} renders attachments.data[{id, mime_type, name, image_data}] with message "".
  it('sends and renders an image without text', async () => {
    const url = 'https://cdn.example.com/uploads/cat.png';
    const dm = await h.control<{ message_id: string }>('POST', `/__sandbox/instagram/${c.igId}/messages`, {
      from: { username: 'pics' },
      attachments: [{ type: 'image', url }],
    });
    expect(dm.status).toBe(201);
    expect(h.lastWebhook().entry[0]?.messaging?.[0]?.message).toEqual({
      mid: dm.body.message_id,
      attachments: [{ type: 'image', payload: { url } }],
    });
    const read = await h.graph('GET', `/${dm.body.message_id}`, c.pageToken, {
      query: { fields: 'id,message,attachments' },
    });
    expect(read.body).toEqual({
      id: dm.body.message_id,
      message: '',
      attachments: {
        data: [
          {
            id: expect.stringMatching(/^\d+$/),
            mime_type: 'image/png',
            name: 'cat.png',
            image_data: { url, preview_url: url, width: 1080, height: 1080 },
          },
        ],
      },
    });
  });

  // Guarantee: text and attachments together travel in one Messenger webhook, and the given size, name and MIME type are kept; the conversation's nested messages show them too.
  it('keeps text with attachments and the given details', async () => {
    const url = 'https://cdn.example.com/a/b/IMG_1.jpg';
    const dm = await h.control<{ message_id: string; conversation_id: string }>(
      'POST',
      `/__sandbox/pages/${c.pageId}/messages`,
      {
        from: { name: 'Pic Fan' },
        text: 'This one',
        attachments: [{ type: 'image', url, width: 640, height: 480, name: 'photo.jpg' }],
      },
    );
    expect(h.lastWebhook().entry[0]?.messaging?.[0]?.message).toEqual({
      mid: dm.body.message_id,
      text: 'This one',
      attachments: [{ type: 'image', payload: { url } }],
    });
    const conversation = await h.graph<{ messages: { data: Record<string, unknown>[] } }>(
      'GET',
      `/${dm.body.conversation_id}`,
      c.pageToken,
      { query: { fields: 'messages.limit(20){id,message,attachments}' } },
    );
    expect(conversation.body.messages.data[0]).toEqual({
      id: dm.body.message_id,
      message: 'This one',
      attachments: {
        data: [
          {
            id: expect.any(String),
            mime_type: 'image/jpeg',
            name: 'photo.jpg',
            image_data: { url, preview_url: url, width: 640, height: 480 },
          },
        ],
      },
    });
  });

  // Guarantee: a DM needs text or attachments, and attachment URLs must be http(s) (400 control errors).
  it('validates inbound attachments', async () => {
    const path = `/__sandbox/instagram/${c.igId}/messages`;
    expect((await h.control('POST', path, { from: { username: 'x' } })).status).toBe(400);
    const ftp = await h.control('POST', path, { attachments: [{ type: 'image', url: 'ftp://x/a.jpg' }] });
    expect(ftp.status).toBe(400);
    const kind = await h.control('POST', path, { attachments: [{ type: 'sticker', url: 'https://x/a' }] });
    expect(kind.status).toBe(400);
  });
});

describe('Send API attachments', () => {
  // Guarantee: the Send API downloads an image attachment, stores it on the message (real size and type), logs attachment_url and tag in the sent log, and the echo carries the attachment and our app_id.
  // Guarantee: like Meta, the message, its echo and GET /{message} name the network's own copy of the file (served by the sandbox), not the URL that was sent.
  it('sends an image by URL', async () => {
    const url = `${h.internet.url}/img/photo.jpg`;
    const res = await sendImage(igsid, { url }, { messaging_type: 'MESSAGE_TAG', tag: 'HUMAN_AGENT' });
    expect(res.status).toBe(200);
    expect(res.body).toEqual({ recipient_id: igsid, message_id: expect.stringMatching(/^aWdf/) });
    const entry = await sentEntry(res.body.message_id);
    expect(entry).toMatchObject({ text: null, attachment_url: url, tag: 'HUMAN_AGENT' });
    const echo = await echoOf(res.body.message_id);
    const echoed = echo.entry[0]?.messaging?.[0]?.message ?? {};
    const hosted = (echoed.attachments as { payload: { url: string } }[])[0]?.payload.url as string;
    expect(hosted).toMatch(new RegExp(`^${h.sandbox.url}/__sandbox/cdn/\\d+/photo\\.jpg$`));
    expect(echo.entry[0]?.messaging?.[0]?.message).toEqual({
      mid: res.body.message_id,
      attachments: [{ type: 'image', payload: { url: hosted } }],
      is_echo: true,
      app_id: Number(h.sandbox.world.config.appId),
    });
    const read = await h.graph<{ attachments: { data: Record<string, unknown>[] } }>(
      'GET',
      `/${res.body.message_id}`,
      c.pageToken,
      { query: { fields: 'attachments' } },
    );
    expect(read.body.attachments.data[0]).toMatchObject({
      mime_type: 'image/jpeg',
      name: 'photo.jpg',
      image_data: { url: hosted, width: 800, height: 600 },
    });
    const file = await fetch(hosted);
    expect(file.status).toBe(200);
    expect(file.headers.get('content-type')).toBe('image/jpeg');
    const original = await (await fetch(url)).arrayBuffer();
    expect(Buffer.from(await file.arrayBuffer()).equals(Buffer.from(original))).toBe(true);
  });

  // Guarantee: a text send logs attachment_url null and the tag as given (null without one).
  it('logs text sends with null attachment_url and their tag', async () => {
    const res = await h.graph<Sent>('POST', `/${c.pageId}/messages`, c.pageToken, {
      json: { recipient: { id: psid }, messaging_type: 'RESPONSE', message: { text: 'plain' } },
    });
    expect(await sentEntry(res.body.message_id)).toMatchObject({
      text: 'plain',
      attachment_url: null,
      tag: null,
    });
  });

  // Guarantee: is_reusable answers an attachment_id that can be sent again by id on the same account; an unknown id is 100/2018074.
  it('reuses an attachment by attachment_id', async () => {
    const url = `${h.internet.url}/img/photo.jpg`;
    const first = await sendImage(psid, { url, is_reusable: true }, { messaging_type: 'RESPONSE' });
    expect(first.body.attachment_id).toMatch(/^\d+$/);
    const again = await sendImage(
      psid,
      { attachment_id: first.body.attachment_id },
      { messaging_type: 'RESPONSE' },
    );
    expect(again.status).toBe(200);
    expect((await sentEntry(again.body.message_id))?.attachment_url).toBe(url);
    const unknown = await sendImage(psid, { attachment_id: '123' }, { messaging_type: 'RESPONSE' });
    expect(unknown.body.error).toMatchObject({ code: 100, error_subcode: 2018074 });
  });

  // Guarantee: Meta's refusals: unreachable URL 100/2018008, over 8 MB 100/2018109, not an image 100/2018047, text and attachment together 100; nothing is stored or logged.
  it('refuses unreachable, too large and wrong files', async () => {
    const before = (await h.control<{ data: unknown[] }>('GET', '/__sandbox/sent')).body.data.length;
    const cases: [string, number | undefined][] = [
      [`${h.internet.url}/img/missing.jpg`, 2018008],
      ['http://127.0.0.1:1/nothing.jpg', 2018008],
      [`${h.internet.url}/img/huge.jpg`, 2018109],
      [`${h.internet.url}/page.html`, 2018047],
    ];
    for (const [url, subcode] of cases) {
      const res = await sendImage(igsid, { url });
      expect(res.status).toBe(400);
      expect(res.body.error).toMatchObject({ code: 100, error_subcode: subcode });
    }
    const both = await h.graph<GraphError>('POST', `/${c.pageId}/messages`, c.pageToken, {
      json: {
        recipient: { id: igsid },
        message: {
          text: 'x',
          attachment: { type: 'image', payload: { url: `${h.internet.url}/img/photo.jpg` } },
        },
      },
    });
    expect(both.body.error.code).toBe(100);
    expect((await h.control<{ data: unknown[] }>('GET', '/__sandbox/sent')).body.data).toHaveLength(before);
  });

  // Guarantee: text limits are unchanged: IG under 1,000 bytes (100/2534015), Messenger at most 2,000 characters.
  it('keeps the text limits', async () => {
    const send = (recipient: string, text: string) =>
      h.graph<GraphError>('POST', `/${c.pageId}/messages`, c.pageToken, {
        json: { recipient: { id: recipient }, messaging_type: 'RESPONSE', message: { text } },
      });
    expect((await send(igsid, 'é'.repeat(500))).body.error).toMatchObject({
      code: 100,
      error_subcode: 2534015,
    });
    expect((await send(igsid, 'é'.repeat(499))).status).toBe(200);
    expect((await send(psid, 'x'.repeat(2001))).body.error.code).toBe(100);
    expect((await send(psid, 'x'.repeat(2000))).status).toBe(200);
  });
});
