import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { type Connected, eventually, type Harness, publishBoth, startHarness } from './harness.ts';

let h: Harness;
let c: Connected;
beforeAll(async () => {
  h = await startHarness();
  c = await h.connect();
});
afterAll(() => h.close());

interface Attempt {
  id: string;
  kind: string;
  attempt: number;
  replay: boolean;
  status: number | null;
  body: string;
}
type Webhook = { id: string | null; url: string | null; status: number | null; error: string | null };

const attempts = async (id: string) =>
  (await h.control<{ data: Attempt[] }>('GET', '/__sandbox/webhooks')).body.data.filter((a) => a.id === id);

describe('webhook delivery ids and replay', () => {
  // Guarantee: a control call that sends a webhook reports the delivery id, and the log lists that delivery under the same id.
  it('gives every delivery an id that the control answer and the log share', async () => {
    const dm = await h.control<{ webhook: Webhook }>('POST', `/__sandbox/instagram/${c.igId}/messages`, {
      from: { username: 'ann' },
      text: 'hello',
    });
    expect(dm.body.webhook).toEqual({
      id: expect.stringMatching(/^wh_[0-9A-Za-z]{16}$/),
      url: `${h.internet.url}/webhook`,
      status: 200,
      error: null,
    });
    const log = await attempts(dm.body.webhook.id ?? '');
    expect(log).toEqual([expect.objectContaining({ kind: 'event', attempt: 1, replay: false, status: 200 })]);
    expect(log[0]?.body).toBe(h.internet.webhooks.at(-1)?.raw.toString());
  });

  // Guarantee: replay sends the exact same bytes and signature headers `times` times, answers one result per send, and the log lists each replay under the same id.
  it('replays the same bytes with the same signature', async () => {
    const dm = await h.control<{ webhook: Webhook }>('POST', `/__sandbox/pages/${c.pageId}/messages`, {
      from: { name: 'Jo Doe' },
      text: 'Grüße / ok?',
    });
    const id = dm.body.webhook.id ?? '';
    const original = h.internet.webhooks.at(-1);
    const before = h.internet.webhooks.length;
    const replay = await h.control<{ replayed: number; results: unknown[] }>(
      'POST',
      `/__sandbox/webhooks/${id}/replay`,
      { times: 3 },
    );
    expect(replay.status).toBe(200);
    expect(replay.body).toEqual({
      replayed: 3,
      results: Array(3).fill({ url: `${h.internet.url}/webhook`, status: 200, error: null }),
    });
    const copies = h.internet.webhooks.slice(before);
    expect(copies).toHaveLength(3);
    for (const copy of copies) {
      expect(copy.raw.equals(original?.raw ?? Buffer.alloc(0))).toBe(true);
      expect(copy.headers['x-hub-signature-256']).toBe(original?.headers['x-hub-signature-256']);
      expect(copy.headers['x-hub-signature']).toBe(original?.headers['x-hub-signature']);
    }
    const log = await attempts(id);
    expect(log.map((a) => a.replay)).toEqual([false, true, true, true]);
    // Without a body, one replay.
    const once = await h.control<{ replayed: number }>('POST', `/__sandbox/webhooks/${id}/replay`);
    expect(once.body.replayed).toBe(1);
  });

  // Guarantee: unknown ids are 404, `times` outside 1..1000 is 400, a verification handshake cannot be replayed (400); all as control errors.
  it('refuses unknown ids, bad times and handshakes', async () => {
    const unknown = await h.control('POST', '/__sandbox/webhooks/wh_nope/replay', { times: 1 });
    expect(unknown).toEqual({ status: 404, body: { error: { message: 'delivery not found' } } });
    const dm = await h.control<{ webhook: Webhook }>('POST', `/__sandbox/instagram/${c.igId}/messages`, {
      from: { username: 'ann' },
      text: 'again',
    });
    for (const times of [0, 1001, 1.5]) {
      const bad = await h.control('POST', `/__sandbox/webhooks/${dm.body.webhook.id}/replay`, { times });
      expect(bad.status).toBe(400);
      expect(JSON.stringify(bad.body)).toContain('times');
    }
    const verification = await h.control<{ id: string }>('POST', '/__sandbox/webhooks/verify', {});
    expect(verification.body.id).toMatch(/^wh_/);
    const handshake = await h.control('POST', `/__sandbox/webhooks/${verification.body.id}/replay`, {});
    expect(handshake.status).toBe(400);
  });

  // Guarantee: comment control calls return the delivery id too, and the sent log names the webhook each API send caused (echo, comment), so any of them can be replayed.
  it('exposes delivery ids for comments and for what the API sent', async () => {
    const { mediaId, postId } = await publishBoth(h, c);
    const igComment = await h.control<{ webhook: Webhook }>(
      'POST',
      `/__sandbox/instagram/media/${mediaId}/comments`,
      { from: { username: 'fan' }, text: 'Nice' },
    );
    const fbComment = await h.control<{ id: string; webhook: Webhook }>(
      'POST',
      `/__sandbox/pages/posts/${postId}/comments`,
      { from: { name: 'Jane Doe' }, text: 'Nice' },
    );
    expect(igComment.body.webhook.id).toMatch(/^wh_/);
    expect(fbComment.body.webhook.id).toMatch(/^wh_/);
    const reply = await h.graph<{ id: string }>('POST', `/${fbComment.body.id}/comments`, c.pageToken, {
      json: { message: 'Thanks' },
    });
    const dm = await h.control<{ sender_id: string }>('POST', `/__sandbox/instagram/${c.igId}/messages`, {
      from: { username: 'buyer' },
      text: 'price?',
    });
    const sent = await h.graph<{ message_id: string }>('POST', `/${c.pageId}/messages`, c.pageToken, {
      json: { recipient: { id: dm.body.sender_id }, message: { text: '5 EUR' } },
    });
    const log = (
      await h.control<{ data: { id: string; webhook_id: string | null }[] }>('GET', '/__sandbox/sent')
    ).body.data;
    const replyEntry = log.find((e) => e.id === reply.body.id);
    const echoEntry = log.find((e) => e.id === sent.body.message_id);
    expect(replyEntry?.webhook_id).toMatch(/^wh_/);
    expect(echoEntry?.webhook_id).toMatch(/^wh_/);
    await eventually(() => h.internet.webhooks.some((w) => w.raw.toString().includes(sent.body.message_id)));
    const echoAttempts = await attempts(echoEntry?.webhook_id ?? '');
    expect(echoAttempts[0]?.body).toContain(sent.body.message_id);
    const before = h.internet.webhooks.length;
    await h.control('POST', `/__sandbox/webhooks/${echoEntry?.webhook_id}/replay`, { times: 2 });
    expect(h.internet.webhooks.slice(before).map((w) => w.raw.toString())).toEqual([
      echoAttempts[0]?.body,
      echoAttempts[0]?.body,
    ]);
  });
});

describe('retries and missing webhook URL', () => {
  // Guarantee: automatic retries of a failed delivery keep the delivery's id and are each listed with their attempt number.
  it('lists retries under the id of their delivery', async () => {
    const r = await startHarness({ webhookRetries: 2, webhookRetryBaseMs: 10 });
    try {
      const rc = await r.connect();
      r.internet.failNext = 2;
      const dm = await r.control<{ webhook: Webhook }>('POST', `/__sandbox/instagram/${rc.igId}/messages`, {
        from: { username: 'ann' },
        text: 'retry me',
      });
      expect(dm.body.webhook).toMatchObject({ status: 500, error: 'HTTP 500' });
      await eventually(() => r.internet.webhooks.length >= 3);
      const log = (await r.control<{ data: Attempt[] }>('GET', '/__sandbox/webhooks')).body.data;
      const mine = log.filter((a) => a.id === dm.body.webhook.id);
      expect(mine.map((a) => [a.attempt, a.status, a.replay])).toEqual([
        [1, 500, false],
        [2, 500, false],
        [3, 200, false],
      ]);
      expect(new Set(mine.map((a) => a.body)).size).toBe(1);
    } finally {
      await r.close();
    }
  });

  // Guarantee: without SANDBOX_WEBHOOK_URL nothing is sent and the webhook result says so with a null id.
  it('answers a null id when no webhook URL is set', async () => {
    const r = await startHarness({ webhookUrl: '' });
    try {
      const rc = await r.connect();
      const dm = await r.control<{ webhook: Webhook }>('POST', `/__sandbox/instagram/${rc.igId}/messages`, {
        from: { username: 'ann' },
        text: 'hi',
      });
      expect(dm.body.webhook).toEqual({
        id: null,
        url: null,
        status: null,
        error: 'SANDBOX_WEBHOOK_URL is not set',
      });
    } finally {
      await r.close();
    }
  });
});
