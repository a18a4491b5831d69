import {
  idOnly,
  list,
  type PagePost,
  type PageStorySummary,
  type PageVideo,
  type PageVideoSummary,
  pagePost,
  pageStorySummary,
  pageVideo,
  pageVideoSummary,
  parse,
  photoResponse,
  storyResponse,
  uploadSession,
} from './shapes.ts';
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

  /** A feed video, fetched by Meta from `fileUrl` and published once processed (facts §3.1). */
  async postVideo(
    token: string,
    pageId: string,
    input: { fileUrl: string; title?: string; description?: string },
  ): Promise<{ id: string }> {
    const body = await this.t.call({
      method: 'POST',
      path: `/${pageId}/videos`,
      token,
      form: { file_url: input.fileUrl, title: input.title, description: input.description },
    });
    return parse(idOnly, body, 'page video');
  }

  /**
   * A Reel or a video Story's upload session, with the file handed over by URL: `start` gives the
   * video id and the upload URL, Meta then fetches the file from `fileUrl` [O: Meta's Reels guide].
   */
  async uploadVideo(
    token: string,
    pageId: string,
    edge: 'video_reels' | 'video_stories',
    fileUrl: string,
  ): Promise<{ videoId: string }> {
    const started = parse(
      uploadSession,
      await this.t.call({
        method: 'POST',
        path: `/${pageId}/${edge}`,
        token,
        form: { upload_phase: 'start' },
      }),
      `${edge} start`,
    );
    await this.t.call({
      method: 'POST',
      path: `/${started.video_id}`,
      token,
      upload: { url: started.upload_url, fileUrl },
    });
    return { videoId: started.video_id };
  }

  /** Publishes an uploaded Reel: it goes live once Meta has processed it. */
  async finishReel(token: string, pageId: string, input: { videoId: string; description?: string }) {
    await this.t.call({
      method: 'POST',
      path: `/${pageId}/video_reels`,
      token,
      form: {
        upload_phase: 'finish',
        video_id: input.videoId,
        video_state: 'PUBLISHED',
        description: input.description,
      },
    });
  }

  /** Publishes an uploaded video as the Page's Story. */
  async finishVideoStory(token: string, pageId: string, videoId: string): Promise<{ postId: string | null }> {
    const body = await this.t.call({
      method: 'POST',
      path: `/${pageId}/video_stories`,
      token,
      form: { upload_phase: 'finish', video_id: videoId },
    });
    return { postId: parse(storyResponse, body, 'video story').post_id ?? null };
  }

  /** An unpublished photo as the Page's Story. */
  async photoStory(token: string, pageId: string, photoId: string): Promise<{ postId: string | null }> {
    const body = await this.t.call({
      method: 'POST',
      path: `/${pageId}/photo_stories`,
      token,
      form: { photo_id: photoId },
    });
    return { postId: parse(storyResponse, body, 'photo story').post_id ?? null };
  }

  /** A Page video's processing and publishing phases, and its permalink. */
  async video(token: string, videoId: string): Promise<PageVideo> {
    return parse(
      pageVideo,
      await this.t.call({
        method: 'GET',
        path: `/${videoId}`,
        token,
        query: { fields: 'id,status,permalink_url,post_id,published' },
      }),
      'page video',
    );
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

  /** The Page's newest videos first: the "did it go through?" check of a feed video. */
  async recentVideos(token: string, pageId: string, limit = 25): Promise<PageVideoSummary[]> {
    const body = await this.t.call({
      method: 'GET',
      path: `/${pageId}/videos`,
      token,
      query: { fields: 'id,description,created_time', limit },
    });
    return parse(list(pageVideoSummary), body, 'page videos').data;
  }

  /** The Page's stories, newest first: the "did it go through?" check of a Story. */
  async recentStories(token: string, pageId: string, limit = 25): Promise<PageStorySummary[]> {
    const body = await this.t.call({ method: 'GET', path: `/${pageId}/stories`, token, query: { limit } });
    return parse(list(pageStorySummary), body, 'page stories').data;
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
