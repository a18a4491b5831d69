import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { type Connected, eventually, type Harness, startHarness, type WebhookBody } from './harness.ts';

let h: Harness;
let c: Connected;
beforeAll(async () => {
  h = await startHarness();
  c = await h.connect();
});
afterAll(() => h.close());

type Dm = { sender_id: string; conversation_id: string };
type AppMessage = { conversation_id: string; message_id: string; webhook: { id: string; status: number } };

describe("messages from the network's own app", () => {
  // Guarantee: an Instagram app message is stored outbound in the person's thread and echoed (is_echo, sender = account, recipient = person) without app_id.
  it('stores and echoes an Instagram app message without app_id', async () => {
    const dm = await h.control<Dm>('POST', `/__sandbox/instagram/${c.igId}/messages`, {
      from: { username: 'mia' },
      text: 'Open today?',
    });
    const res = await h.control<AppMessage>('POST', `/__sandbox/instagram/${c.igId}/app-messages`, {
      to: { id: dm.body.sender_id },
      text: 'Yes, until 6',
    });
    expect(res.status).toBe(201);
    expect(res.body).toEqual({
      conversation_id: dm.body.conversation_id,
      message_id: expect.stringMatching(/^aWdfZAG1/),
      webhook: { id: expect.stringMatching(/^wh_/), url: expect.any(String), status: 200, error: null },
    });
    const event = h.lastWebhook();
    expect(event.object).toBe('instagram');
    expect(event.entry[0]?.id).toBe(c.igId);
    expect(event.entry[0]?.messaging?.[0]).toMatchObject({
      sender: { id: c.igId },
      recipient: { id: dm.body.sender_id },
    });
    expect(event.entry[0]?.messaging?.[0]?.message).toEqual({
      mid: res.body.message_id,
      text: 'Yes, until 6',
      is_echo: true,
    });
    const thread = await h.graph<{
      messages: { data: { id: string; message: string; from: { id: string } }[] };
    }>('GET', `/${dm.body.conversation_id}`, c.pageToken, { query: { fields: 'messages{id,message,from}' } });
    expect(thread.body.messages.data[0]).toEqual({
      id: res.body.message_id,
      message: 'Yes, until 6',
      from: { id: c.igId, username: expect.any(String) },
    });
    // Not something the product sent.
    const sent = await h.control<{ data: { id: string }[] }>('GET', '/__sandbox/sent');
    expect(sent.body.data.map((e) => e.id)).not.toContain(res.body.message_id);
  });

  // Guarantee: a Page (Messenger) app message is echoed with object page, sender = page, recipient = PSID, no app_id.
  it('stores and echoes a Messenger app message without app_id', async () => {
    const dm = await h.control<Dm>('POST', `/__sandbox/pages/${c.pageId}/messages`, {
      from: { name: 'Jo Doe' },
      text: 'Hi',
    });
    const res = await h.control<AppMessage>('POST', `/__sandbox/pages/${c.pageId}/app-messages`, {
      to: { id: dm.body.sender_id },
      text: 'Hello from the Page inbox',
    });
    expect(res.status).toBe(201);
    expect(res.body.message_id).toMatch(/^m_/);
    const event = h.lastWebhook();
    expect(event).toMatchObject({
      object: 'page',
      entry: [
        {
          id: c.pageId,
          messaging: [
            {
              sender: { id: c.pageId },
              recipient: { id: dm.body.sender_id },
              message: { mid: res.body.message_id, is_echo: true },
            },
          ],
        },
      ],
    });
    expect(event.entry[0]?.messaging?.[0]?.message).not.toHaveProperty('app_id');
  });

  // Guarantee: a Send API echo carries app_id = META_APP_ID (as a number, like Meta), so a consumer can tell our sends from the app's.
  it('puts our app_id on Send API echoes', async () => {
    const dm = await h.control<Dm>('POST', `/__sandbox/instagram/${c.igId}/messages`, {
      from: { username: 'leo' },
      text: 'Hi',
    });
    const sent = await h.graph<{ message_id: string }>('POST', `/${c.pageId}/messages`, c.pageToken, {
      json: { recipient: { id: dm.body.sender_id }, message: { text: 'From our app' } },
    });
    const isEcho = (raw: Buffer) => raw.toString().includes(sent.body.message_id);
    await eventually(() => h.internet.webhooks.some((w) => isEcho(w.raw)));
    const raw = h.internet.webhooks.find((w) => isEcho(w.raw))?.raw.toString() ?? '{}';
    const echo = JSON.parse(raw) as WebhookBody;
    expect(echo.entry[0]?.messaging?.[0]?.message).toEqual({
      mid: sent.body.message_id,
      text: 'From our app',
      is_echo: true,
      app_id: Number(h.sandbox.world.config.appId),
    });
  });

  // Guarantee: an unknown person, a person of another account, or an unknown account is a 404; a body without text/attachments is a 400.
  it('refuses unknown people and empty bodies', async () => {
    const other = await h.connect('Bob');
    const dm = await h.control<Dm>('POST', `/__sandbox/instagram/${other.igId}/messages`, {
      from: { username: 'zoe' },
      text: 'Hi',
    });
    const strangers = [
      [`/__sandbox/instagram/${c.igId}/app-messages`, '6100000000000000'],
      [`/__sandbox/instagram/${c.igId}/app-messages`, dm.body.sender_id],
      [`/__sandbox/pages/${c.pageId}/app-messages`, dm.body.sender_id],
    ] as const;
    for (const [path, id] of strangers) {
      const answer = await h.control('POST', path, { to: { id }, text: 'x' });
      expect(answer).toEqual({ status: 404, body: { error: { message: 'person not found' } } });
    }
    const noAccount = await h.control('POST', '/__sandbox/instagram/17841400000000000/app-messages', {
      to: { id: dm.body.sender_id },
      text: 'x',
    });
    expect(noAccount.status).toBe(404);
    const empty = await h.control('POST', `/__sandbox/instagram/${other.igId}/app-messages`, {
      to: { id: dm.body.sender_id },
    });
    expect(empty.status).toBe(400);
  });
});
