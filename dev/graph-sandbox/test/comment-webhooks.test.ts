import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { type Connected, type Harness, publishBoth, startHarness } from './harness.ts';

let h: Harness;
let c: Connected;
let mediaId: string;
let postId: string;
beforeAll(async () => {
  h = await startHarness();
  c = await h.connect();
  ({ mediaId, postId } = await publishBoth(h, c));
});
afterAll(() => h.close());

const change = () => {
  const entry = h.lastWebhook().entry[0];
  return { entry, change: entry?.changes?.[0] };
};

describe('Instagram comment webhooks', () => {
  // Guarantee: a comment on media carries media.id and no parent_id; a reply carries parent_id; both carry from{id,username} (facts §5.6).
  it('carries media.id, and parent_id for replies', async () => {
    const top = await h.control<{ id: string; from: { id: string } }>(
      'POST',
      `/__sandbox/instagram/media/${mediaId}/comments`,
      { from: { username: 'fan' }, text: 'Gluten free?' },
    );
    const first = change();
    expect(h.lastWebhook().object).toBe('instagram');
    expect(first.entry?.id).toBe(c.igId);
    expect(first.change).toEqual({
      field: 'comments',
      value: {
        id: top.body.id,
        text: 'Gluten free?',
        from: { id: top.body.from.id, username: 'fan' },
        media: { id: mediaId, media_product_type: 'FEED' },
      },
    });
    const reply = await h.control<{ id: string }>('POST', `/__sandbox/instagram/media/${mediaId}/comments`, {
      from: { username: 'other' },
      text: 'Me too',
      parent_id: top.body.id,
    });
    expect(change().change?.value).toMatchObject({
      id: reply.body.id,
      parent_id: top.body.id,
      media: { id: mediaId },
    });
  });

  // Guarantee: the account's own API comments and replies send the webhook with from.id = the account and from.self_ig_scoped_id.
  it('marks the account own comments with from.id and self_ig_scoped_id', async () => {
    const own = await h.graph<{ id: string }>('POST', `/${mediaId}/comments`, c.pageToken, {
      json: { message: 'Yes it is' },
    });
    expect(change().change?.value).toEqual({
      id: own.body.id,
      text: 'Yes it is',
      from: { id: c.igId, username: expect.any(String), self_ig_scoped_id: c.igId },
      media: { id: mediaId, media_product_type: 'FEED' },
    });
    const top = await h.control<{ id: string }>('POST', `/__sandbox/instagram/media/${mediaId}/comments`, {
      from: { username: 'asker' },
      text: 'Vegan?',
    });
    const reply = await h.graph<{ id: string }>('POST', `/${top.body.id}/replies`, c.pageToken, {
      json: { message: 'Yes' },
    });
    expect(change().change?.value).toMatchObject({
      id: reply.body.id,
      parent_id: top.body.id,
      from: { id: c.igId, self_ig_scoped_id: c.igId },
    });
  });
});

describe('Page feed comment webhooks', () => {
  // Guarantee: a feed comment webhook carries item/verb, comment_id, post_id, parent_id (= post_id when top-level, the comment for replies), from, message, created_time (s) and post.permalink_url matching the post's (facts §5.8).
  it('carries post_id, parent_id, comment_id, from, message, created_time and the permalink', async () => {
    const permalink = (
      await h.graph<{ permalink_url: string }>('GET', `/${postId}`, c.pageToken, {
        query: { fields: 'permalink_url' },
      })
    ).body.permalink_url;
    const top = await h.control<{ id: string; from: { id: string } }>(
      'POST',
      `/__sandbox/pages/posts/${postId}/comments`,
      { from: { name: 'Jane Doe' }, text: 'Ship to Ireland?' },
    );
    const first = change();
    expect(h.lastWebhook().object).toBe('page');
    expect(first.entry?.id).toBe(c.pageId);
    expect(first.change?.field).toBe('feed');
    expect(first.change?.value).toMatchObject({
      item: 'comment',
      verb: 'add',
      comment_id: top.body.id,
      post_id: postId,
      parent_id: postId,
      from: { id: top.body.from.id, name: 'Jane Doe' },
      message: 'Ship to Ireland?',
      created_time: expect.any(Number),
      post: { id: postId, permalink_url: permalink, is_published: true },
    });
    const reply = await h.control<{ id: string }>('POST', `/__sandbox/pages/posts/${postId}/comments`, {
      from: { name: 'Ann' },
      text: 'Same question',
      parent_id: top.body.id,
    });
    expect(change().change?.value).toMatchObject({
      comment_id: reply.body.id,
      post_id: postId,
      parent_id: top.body.id,
    });
  });

  // Guarantee: the Page's own API comment sends the feed webhook with from.id = the Page.
  it('sends the Page own comments with from.id = page', async () => {
    const own = await h.graph<{ id: string }>('POST', `/${postId}/comments`, c.pageToken, {
      json: { message: 'We do!' },
    });
    expect(change().change?.value).toMatchObject({
      comment_id: own.body.id,
      post_id: postId,
      parent_id: postId,
      from: { id: c.pageId },
      message: 'We do!',
    });
  });
});
