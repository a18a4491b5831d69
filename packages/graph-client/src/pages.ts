import { idOnly, list, type PagePost, pagePost, parse, photoResponse } from './shapes.ts';
import type { GraphTransport } from './transport.ts';

const POST_FIELDS = 'id,message,created_time,permalink_url,full_picture';

/** Page publishing with a page token (facts §3): text/link posts, photos, multi-photo posts. */
export class PagesApi {
  constructor(private readonly t: GraphTransport) {}

  async postToFeed(
    token: string,
    pageId: string,
    input: { message?: string; link?: string },
  ): Promise<{ id: string }> {
    const body = await this.t.call({
      method: 'POST',
      path: `/${pageId}/feed`,
      token,
      form: { message: input.message, link: input.link },
    });
    return parse(idOnly, body, 'page feed post');
  }

  /** A published photo answers `{ id, post_id }`; an unpublished one (for multi-photo posts) only `{ id }`. */
  async postPhoto(
    token: string,
    pageId: string,
    input: { url: string; caption?: string; published?: boolean },
  ) {
    const body = await this.t.call({
      method: 'POST',
      path: `/${pageId}/photos`,
      token,
      form: { url: input.url, caption: input.caption, published: input.published ?? true },
    });
    return parse(photoResponse, body, 'page photo');
  }

  /** Uploads each photo unpublished, then one feed post with `attached_media` (facts §3.1). */
  async postMultiPhoto(
    token: string,
    pageId: string,
    input: { message?: string; photoUrls: string[] },
  ): Promise<{ id: string; photoIds: string[] }> {
    const photoIds: string[] = [];
    for (const url of input.photoUrls)
      photoIds.push((await this.postPhoto(token, pageId, { url, published: false })).id);
    const attached = JSON.stringify(photoIds.map((media_fbid) => ({ media_fbid })));
    const body = await this.t.call({
      method: 'POST',
      path: `/${pageId}/feed`,
      token,
      form: { message: input.message, attached_media: attached },
    });
    return { id: parse(idOnly, body, 'multi-photo post').id, photoIds };
  }

  async post(token: string, postId: string, fields = POST_FIELDS): Promise<PagePost> {
    return parse(
      pagePost,
      await this.t.call({ method: 'GET', path: `/${postId}`, token, query: { fields } }),
      'page post',
    );
  }

  async permalink(token: string, postId: string): Promise<string | null> {
    return (await this.post(token, postId, 'id,permalink_url')).permalink_url ?? null;
  }

  /** Newest posts first: the "did it go through?" check for Pages. */
  async recentPosts(token: string, pageId: string, limit = 25): Promise<PagePost[]> {
    const body = await this.t.call({
      method: 'GET',
      path: `/${pageId}/published_posts`,
      token,
      query: { fields: POST_FIELDS, limit },
    });
    return parse(list(pagePost), body, 'page posts').data;
  }
}
