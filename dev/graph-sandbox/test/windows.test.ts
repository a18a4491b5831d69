import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { type Connected, type Harness, publishBoth, startHarness } from './harness.ts';

let h: Harness;
let c: Connected;
beforeAll(async () => {
  h = await startHarness({ sendEchoes: false });
  c = await h.connect();
});
afterAll(() => h.close());

const HOUR = 3600;
type GraphError = { error: { code: number; error_subcode?: number } };

const advance = async (seconds: number) =>
  Date.parse(
    (await h.control<{ now: string }>('POST', '/__sandbox/clock', { advance_seconds: seconds })).body.now,
  );
const inbound = async (platform: 'instagram' | 'messenger', name: string) => {
  const path =
    platform === 'instagram'
      ? `/__sandbox/instagram/${c.igId}/messages`
      : `/__sandbox/pages/${c.pageId}/messages`;
  const from = platform === 'instagram' ? { username: name } : { name };
  return (await h.control<{ sender_id: string; message_id: string }>('POST', path, { from, text: 'hi' }))
    .body;
};
const send = (recipient: string, extra: Record<string, unknown> = {}) =>
  h.graph<GraphError & { message_id: string }>('POST', `/${c.pageId}/messages`, c.pageToken, {
    json: { recipient: { id: recipient }, message: { text: 'answer' }, messaging_type: 'RESPONSE', ...extra },
  });
const humanAgent = { messaging_type: 'MESSAGE_TAG', tag: 'HUMAN_AGENT' };

describe('messaging windows follow the sandbox clock', () => {
  // Guarantee: the 24 h window is measured on the sandbox clock: open at 23 h, closed at 25 h (IG 10/2534022, Messenger 10/2018278), reopened by a new message.
  it('closes the 24-hour window when the clock moves', async () => {
    const ig = await inbound('instagram', 'win24');
    const fb = await inbound('messenger', 'Win Four');
    await advance(23 * HOUR);
    expect((await send(ig.sender_id)).status).toBe(200);
    expect((await send(fb.sender_id)).status).toBe(200);
    await advance(2 * HOUR);
    const igLate = await send(ig.sender_id);
    expect(igLate.status).toBe(400);
    expect(igLate.body.error).toMatchObject({ code: 10, error_subcode: 2534022 });
    const fbLate = await send(fb.sender_id);
    expect(fbLate.body.error).toMatchObject({ code: 10, error_subcode: 2018278 });
    await inbound('instagram', 'win24');
    expect((await send(ig.sender_id)).status).toBe(200);
  });

  // Guarantee: HUMAN_AGENT extends the window to 7 days on the sandbox clock, and no further.
  it('closes the 7-day HUMAN_AGENT window when the clock moves', async () => {
    const ig = await inbound('instagram', 'agent7');
    const fb = await inbound('messenger', 'Agent Seven');
    await advance(25 * HOUR);
    expect((await send(ig.sender_id)).status).toBe(400);
    expect((await send(ig.sender_id, humanAgent)).status).toBe(200);
    expect((await send(fb.sender_id, humanAgent)).status).toBe(200);
    await advance(6 * 24 * HOUR);
    const igLate = await send(ig.sender_id, humanAgent);
    expect(igLate.body.error).toMatchObject({ code: 10, error_subcode: 2534022 });
    const fbLate = await send(fb.sender_id, humanAgent);
    expect(fbLate.body.error).toMatchObject({ code: 10, error_subcode: 2018278 });
  });

  // Guarantee: a private reply is refused (100/2534025) once the comment is older than 7 days by the sandbox clock, and allowed before.
  it('closes the 7-day private-reply window when the clock moves', async () => {
    const { mediaId, postId } = await publishBoth(h, c);
    const comment = async (path: string, from: Record<string, string>) =>
      (await h.control<{ id: string }>('POST', path, { from, text: 'DM me' })).body.id;
    const old = await comment(`/__sandbox/instagram/media/${mediaId}/comments`, { username: 'old' });
    const oldFb = await comment(`/__sandbox/pages/posts/${postId}/comments`, { name: 'Old Fb' });
    await advance(6 * 24 * HOUR);
    const fresh = await comment(`/__sandbox/instagram/media/${mediaId}/comments`, { username: 'fresh' });
    await advance(24 * HOUR + 60);
    const privateReply = (commentId: string) =>
      h.graph<GraphError>('POST', `/${c.pageId}/messages`, c.pageToken, {
        json: { recipient: { comment_id: commentId }, message: { text: 'Sent you the details' } },
      });
    for (const id of [old, oldFb]) {
      const late = await privateReply(id);
      expect(late.status).toBe(400);
      expect(late.body.error).toMatchObject({ code: 100, error_subcode: 2534025 });
    }
    expect((await privateReply(fresh)).status).toBe(200);
  });
});

describe('times in stored objects and webhooks follow the sandbox clock', () => {
  // Guarantee: inbound DMs get created_time, webhook timestamp and entry.time (ms) from the sandbox clock, not real time.
  it('stamps DMs and their webhooks with the sandbox clock', async () => {
    const now = await advance(3 * 24 * HOUR);
    expect(now - Date.now()).toBeGreaterThan((3 * 24 * HOUR - 60) * 1000);
    const dm = await inbound('instagram', 'clocked');
    const event = h.lastWebhook();
    const entry = event.entry[0];
    const timestamp = entry?.messaging?.[0]?.timestamp ?? 0;
    expect(timestamp).toBeGreaterThanOrEqual(now);
    expect(timestamp - now).toBeLessThan(60_000);
    expect((entry?.time ?? 0) - now).toBeLessThan(60_000);
    expect(entry?.time).toBeGreaterThanOrEqual(timestamp);
    const message = await h.graph<{ created_time: string }>('GET', `/${dm.message_id}`, c.pageToken, {
      query: { fields: 'created_time' },
    });
    expect(message.body.created_time).toBe(`${new Date(timestamp).toISOString().slice(0, 19)}+0000`);
    const log = await h.control<{ data: { at: string }[] }>('GET', '/__sandbox/webhooks');
    expect(Date.parse(log.body.data.at(-1)?.at ?? '')).toBeGreaterThanOrEqual(now);
  });

  // Guarantee: inbound comments get timestamp/created_time from the sandbox clock, and comment webhooks carry sandbox-clock seconds (entry.time, feed created_time).
  it('stamps comments and their webhooks with the sandbox clock', async () => {
    const { mediaId, postId } = await publishBoth(h, c);
    const now = await advance(60);
    const seconds = Math.floor(now / 1000);
    const ig = await h.control<{ id: string }>('POST', `/__sandbox/instagram/media/${mediaId}/comments`, {
      from: { username: 'clock' },
      text: 'when?',
    });
    const igEntry = h.lastWebhook().entry[0];
    expect((igEntry?.time ?? 0) - seconds).toBeGreaterThanOrEqual(0);
    expect((igEntry?.time ?? 0) - seconds).toBeLessThan(60);
    const igRead = await h.graph<{ timestamp: string }>('GET', `/${ig.body.id}`, c.pageToken, {
      query: { fields: 'timestamp' },
    });
    expect(Date.parse(igRead.body.timestamp.replace('+0000', 'Z'))).toBeGreaterThanOrEqual(seconds * 1000);
    await h.control('POST', `/__sandbox/pages/posts/${postId}/comments`, {
      from: { name: 'Clock' },
      text: 'when?',
    });
    const fbEntry = h.lastWebhook().entry[0];
    const createdTime = Number(fbEntry?.changes?.[0]?.value.created_time);
    expect(createdTime - seconds).toBeGreaterThanOrEqual(0);
    expect(createdTime - seconds).toBeLessThan(60);
    expect((fbEntry?.time ?? 0) - seconds).toBeLessThan(60);
  });
});
