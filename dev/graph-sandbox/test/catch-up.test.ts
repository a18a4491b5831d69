import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { type Connected, type Harness, publishBoth, startHarness } from './harness.ts';

let h: Harness;
let c: Connected;
beforeAll(async () => {
  h = await startHarness({ sendEchoes: false });
  c = await h.connect();
});
afterAll(() => h.close());

/** The selections @svc/graph-client asks for (packages/graph-client/src/inbox.ts). */
const MESSAGE_FIELDS = 'id,created_time,from,to,message,attachments';
const CONVERSATION_FIELDS = `id,updated_time,participants,messages.limit(20){${MESSAGE_FIELDS}}`;
const IG_COMMENT_FIELDS = 'id,text,timestamp,username,from,parent_id,hidden';
const PAGE_COMMENT_FIELDS = 'id,message,created_time,from,parent{id},is_hidden,can_reply_privately';

type Person = { id: string; username?: string; name?: string };
type Msg = { id: string; created_time: string; from: Person; to: { data: Person[] }; message: string };
type Conv = { id: string; updated_time: string; participants: { data: Person[] }; messages: { data: Msg[] } };
type List<T> = { data: T[]; paging: { cursors: { after: string }; next?: string } };

const tick = () => h.control('POST', '/__sandbox/clock', { advance_seconds: 1 });

describe('conversation catch-up', () => {
  // Guarantee: the conversation list with the client's fields gives participants and the 20 most recent messages newest first, conversations newest first, paged with limit/after until no `next`.
  it('lists conversations with their 20 latest messages, paged', async () => {
    const people: { sender_id: string; conversation_id: string }[] = [];
    for (const username of ['first', 'second', 'third']) {
      const dm = await h.control<{ sender_id: string; conversation_id: string }>(
        'POST',
        `/__sandbox/instagram/${c.igId}/messages`,
        { from: { username }, text: `${username} 0` },
      );
      people.push(dm.body);
      await tick();
    }
    // 25 messages in the first thread, alternating person and business (from the IG app); it becomes the newest.
    const first = people[0] ?? { sender_id: '', conversation_id: '' };
    for (let i = 1; i < 25; i++) {
      await (i % 2
        ? h.control('POST', `/__sandbox/instagram/${c.igId}/app-messages`, {
            to: { id: first.sender_id },
            text: `first ${i}`,
          })
        : h.control('POST', `/__sandbox/instagram/${c.igId}/messages`, {
            from: { username: 'first' },
            text: `first ${i}`,
          }));
      await tick();
    }
    const page1 = await h.graph<List<Conv>>('GET', `/${c.pageId}/conversations`, c.pageToken, {
      query: { platform: 'instagram', fields: CONVERSATION_FIELDS, limit: 2 },
    });
    expect(page1.status).toBe(200);
    expect(page1.body.data.map((x) => x.id)).toEqual([first.conversation_id, people[2]?.conversation_id]);
    const thread = page1.body.data[0] as Conv;
    expect(thread.messages.data.map((m) => m.message)).toEqual(
      Array.from({ length: 20 }, (_, k) => `first ${24 - k}`),
    );
    const times = thread.messages.data.map((m) => Date.parse(m.created_time.replace('+0000', 'Z')));
    expect([...times].sort((a, b) => b - a)).toEqual(times);
    expect(thread.updated_time).toBe(thread.messages.data[0]?.created_time);
    expect(thread.participants.data).toEqual(
      expect.arrayContaining([
        { id: first.sender_id, username: 'first' },
        { id: c.igId, username: expect.any(String) },
      ]),
    );
    const [latest, previous] = thread.messages.data;
    expect(latest).toEqual({
      id: expect.any(String),
      created_time: expect.stringMatching(/^\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d\+0000$/),
      from: { id: first.sender_id, username: 'first' },
      to: { data: [{ id: c.igId, username: expect.any(String) }] },
      message: 'first 24',
    });
    expect(previous?.from.id).toBe(c.igId);
    expect(page1.body.paging.next).toContain('after=');
    const next = new URL(page1.body.paging.next ?? '');
    expect(next.searchParams.get('fields')).toBe(CONVERSATION_FIELDS);
    const page2 = await h.graph<List<Conv>>('GET', `/${c.pageId}/conversations`, c.pageToken, {
      query: {
        platform: 'instagram',
        fields: CONVERSATION_FIELDS,
        limit: 2,
        after: page1.body.paging.cursors.after,
      },
    });
    expect(page2.body.data.map((x) => x.id)).toEqual([people[1]?.conversation_id]);
    expect(page2.body.paging.next).toBeUndefined();
    // The platform parameter keeps Messenger threads apart.
    const messenger = await h.graph<List<Conv>>('GET', `/${c.pageId}/conversations`, c.pageToken, {
      query: { platform: 'messenger', fields: CONVERSATION_FIELDS },
    });
    expect(messenger.body.data).toEqual([]);
  });

  // Guarantee: profile lookups answer name/username/profile_pic for an IGSID and first_name/last_name/profile_pic for a PSID.
  it('looks up IG and Messenger profiles', async () => {
    const ig = await h.control<{ sender_id: string }>('POST', `/__sandbox/instagram/${c.igId}/messages`, {
      from: { username: 'jane.doe', name: 'Jane Doe' },
      text: 'hi',
    });
    const igProfile = await h.graph('GET', `/${ig.body.sender_id}`, c.pageToken, {
      query: { fields: 'name,username,profile_pic' },
    });
    expect(igProfile.body).toEqual({
      id: ig.body.sender_id,
      name: 'Jane Doe',
      username: 'jane.doe',
      profile_pic: expect.stringMatching(/^http/),
    });
    const fb = await h.control<{ sender_id: string }>('POST', `/__sandbox/pages/${c.pageId}/messages`, {
      from: { name: 'Jo Anne Doe' },
      text: 'hi',
    });
    const fbProfile = await h.graph('GET', `/${fb.body.sender_id}`, c.pageToken, {
      query: { fields: 'first_name,last_name,profile_pic' },
    });
    expect(fbProfile.body).toEqual({
      id: fb.body.sender_id,
      first_name: 'Jo',
      last_name: 'Anne Doe',
      profile_pic: expect.stringMatching(/^http/),
    });
  });
});

describe('recent objects and their comments', () => {
  // Guarantee: GET /{ig}/media and /{page}/published_posts and /feed list recent objects newest first with the client's fields.
  it('lists recent media and posts newest first', async () => {
    const older = await publishBoth(h, c);
    await tick();
    const newer = await publishBoth(h, c);
    const media = await h.graph<List<Record<string, unknown>>>('GET', `/${c.igId}/media`, c.pageToken, {
      query: { fields: 'id,caption,media_type,media_url,permalink,shortcode,timestamp', limit: 2 },
    });
    expect(media.body.data.map((m) => m.id)).toEqual([newer.mediaId, older.mediaId]);
    expect(media.body.data[0]).toMatchObject({ caption: 'New bread', media_type: 'IMAGE' });
    for (const edge of ['published_posts', 'feed']) {
      const posts = await h.graph<List<Record<string, unknown>>>('GET', `/${c.pageId}/${edge}`, c.pageToken, {
        query: { fields: 'id,message,created_time,permalink_url,full_picture', limit: 2 },
      });
      expect(posts.body.data.map((p) => p.id)).toEqual([newer.postId, older.postId]);
      expect(posts.body.data[0]?.permalink_url).toMatch(/\/posts\//);
    }
  });

  // Guarantee: IG media comments are top-level only, newest first, with the client's fields, and a nested replies{…} selection renders each reply with the asked fields (username, from).
  it('reads Instagram comments with nested replies', async () => {
    const { mediaId } = await publishBoth(h, c);
    const top1 = await h.control<{ id: string }>('POST', `/__sandbox/instagram/media/${mediaId}/comments`, {
      from: { username: 'one' },
      text: 'first',
    });
    const top2 = await h.control<{ id: string }>('POST', `/__sandbox/instagram/media/${mediaId}/comments`, {
      from: { username: 'two' },
      text: 'second',
    });
    const reply = await h.control<{ id: string; from: { id: string } }>(
      'POST',
      `/__sandbox/instagram/media/${mediaId}/comments`,
      { from: { username: 'three' }, text: 'reply', parent_id: top1.body.id },
    );
    const own = await h.graph<{ id: string }>('POST', `/${top1.body.id}/replies`, c.pageToken, {
      json: { message: 'thanks' },
    });
    const plain = await h.graph<List<Record<string, unknown>>>('GET', `/${mediaId}/comments`, c.pageToken, {
      query: { fields: IG_COMMENT_FIELDS },
    });
    expect(plain.body.data.map((x) => x.id)).toEqual([top2.body.id, top1.body.id]);
    expect(plain.body.data[1]).toEqual({
      id: top1.body.id,
      text: 'first',
      timestamp: expect.any(String),
      username: 'one',
      from: { id: expect.any(String), username: 'one' },
      hidden: false,
    });
    const nested = await h.graph<List<{ id: string; replies?: { data: Record<string, unknown>[] } }>>(
      'GET',
      `/${mediaId}/comments`,
      c.pageToken,
      { query: { fields: `${IG_COMMENT_FIELDS},replies{id,text,username,timestamp,from,parent_id}` } },
    );
    const replies = nested.body.data.find((x) => x.id === top1.body.id)?.replies?.data ?? [];
    expect(replies.map((r) => r.id).sort()).toEqual([reply.body.id, own.body.id].sort());
    expect(replies.find((r) => r.id === reply.body.id)).toEqual({
      id: reply.body.id,
      text: 'reply',
      username: 'three',
      timestamp: expect.any(String),
      from: { id: reply.body.from.id, username: 'three' },
      parent_id: top1.body.id,
    });
    expect(replies.find((r) => r.id === own.body.id)?.from).toEqual({
      id: c.igId,
      username: expect.any(String),
    });
  });

  // Guarantee: Page post comments: toplevel by default; filter=stream gives all comments flat with parent{id} on replies only; the client's fields all answer.
  it('reads Page comments top-level and as a flat stream', async () => {
    const { postId } = await publishBoth(h, c);
    const top = await h.control<{ id: string }>('POST', `/__sandbox/pages/posts/${postId}/comments`, {
      from: { name: 'Ann Top' },
      text: 'top',
    });
    const reply = await h.graph<{ id: string }>('POST', `/${top.body.id}/comments`, c.pageToken, {
      json: { message: 'page reply' },
    });
    const toplevel = await h.graph<List<Record<string, unknown>>>('GET', `/${postId}/comments`, c.pageToken, {
      query: { fields: PAGE_COMMENT_FIELDS },
    });
    expect(toplevel.body.data.map((x) => x.id)).toEqual([top.body.id]);
    expect(toplevel.body.data[0]).toEqual({
      id: top.body.id,
      message: 'top',
      created_time: expect.any(String),
      from: { id: expect.any(String), name: 'Ann Top' },
      is_hidden: false,
      can_reply_privately: true,
    });
    const stream = await h.graph<List<Record<string, unknown>>>('GET', `/${postId}/comments`, c.pageToken, {
      query: { fields: PAGE_COMMENT_FIELDS, filter: 'stream' },
    });
    const byId = new Map(stream.body.data.map((x) => [x.id, x]));
    expect([...byId.keys()].sort()).toEqual([top.body.id, reply.body.id].sort());
    expect(byId.get(reply.body.id)).toMatchObject({
      parent: { id: top.body.id },
      from: { id: c.pageId },
      can_reply_privately: false,
    });
    expect(byId.get(top.body.id)).not.toHaveProperty('parent');
    const nested = await h.graph<List<{ comments?: { data: Record<string, unknown>[] } }>>(
      'GET',
      `/${postId}/comments`,
      c.pageToken,
      { query: { fields: 'id,comments{id,message,from}' } },
    );
    expect(nested.body.data[0]?.comments?.data).toEqual([
      { id: reply.body.id, message: 'page reply', from: { id: c.pageId, name: expect.any(String) } },
    ]);
  });
});
