import {
  type ContainerStatus,
  containerStatus,
  type InstagramMedia,
  idOnly,
  igMedia,
  list,
  parse,
  publishingLimit,
} from './shapes.ts';
import type { GraphTransport } from './transport.ts';

const MEDIA_FIELDS = 'id,caption,media_type,media_url,permalink,shortcode,timestamp';

/** What a Reel container is made of (facts §2.2); the cover is an image URL or a frame offset. */
export interface ReelContainer {
  videoUrl: string;
  caption?: string;
  shareToFeed?: boolean;
  coverUrl?: string;
  thumbOffsetMs?: number;
  collaborators?: string[];
  locationId?: string;
}

/**
 * Instagram content publishing (facts §2): container → status → media_publish → permalink.
 * Creating and publishing are writes: they are retried only on Meta's explicit transient errors,
 * never after a timeout. After any doubt, `recentMedia` tells whether a post went through.
 */
export class InstagramApi {
  constructor(private readonly t: GraphTransport) {}

  async createImageContainer(
    token: string,
    igUserId: string,
    input: { imageUrl: string; caption?: string; altText?: string },
  ) {
    return this.create(token, igUserId, {
      image_url: input.imageUrl,
      caption: input.caption,
      alt_text: input.altText,
    });
  }

  /** A carousel item: an image, or a video (`media_type=VIDEO`, still used for carousel items; facts §2.2). */
  async createCarouselItem(
    token: string,
    igUserId: string,
    input: { imageUrl: string } | { videoUrl: string },
  ) {
    const media =
      'videoUrl' in input
        ? { media_type: 'VIDEO', video_url: input.videoUrl }
        : { image_url: input.imageUrl };
    return this.create(token, igUserId, { ...media, is_carousel_item: true });
  }

  /** A Reel container (facts §2.2); Meta processes the video before it can be published. */
  async createReelContainer(token: string, igUserId: string, input: ReelContainer) {
    return this.create(token, igUserId, {
      media_type: 'REELS',
      video_url: input.videoUrl,
      caption: input.caption,
      share_to_feed: input.shareToFeed,
      cover_url: input.coverUrl,
      thumb_offset: input.thumbOffsetMs === undefined ? undefined : String(input.thumbOffsetMs),
      collaborators: input.collaborators?.length ? JSON.stringify(input.collaborators) : undefined,
      location_id: input.locationId,
    });
  }

  /** A Story container: one image or one video, no caption (facts §2.2). */
  async createStoryContainer(
    token: string,
    igUserId: string,
    input: { imageUrl: string } | { videoUrl: string },
  ) {
    const media = 'videoUrl' in input ? { video_url: input.videoUrl } : { image_url: input.imageUrl };
    return this.create(token, igUserId, { media_type: 'STORIES', ...media });
  }

  async createCarousel(token: string, igUserId: string, input: { children: string[]; caption?: string }) {
    return this.create(token, igUserId, {
      media_type: 'CAROUSEL',
      children: input.children.join(','),
      caption: input.caption,
    });
  }

  async containerStatus(token: string, containerId: string): Promise<ContainerStatus> {
    const body = await this.t.call({
      method: 'GET',
      path: `/${containerId}`,
      token,
      query: { fields: 'id,status_code,status' },
    });
    return parse(containerStatus, body, 'container status');
  }

  async publish(token: string, igUserId: string, creationId: string): Promise<{ id: string }> {
    const body = await this.t.call({
      method: 'POST',
      path: `/${igUserId}/media_publish`,
      token,
      form: { creation_id: creationId },
    });
    return parse(idOnly, body, 'media_publish');
  }

  async publishingLimit(
    token: string,
    igUserId: string,
  ): Promise<{ quotaUsage: number; quotaTotal: number | null; quotaDurationS: number | null }> {
    const body = await this.t.call({
      method: 'GET',
      path: `/${igUserId}/content_publishing_limit`,
      token,
      query: { fields: 'quota_usage,config' },
    });
    const entry = parse(publishingLimit, body, 'content_publishing_limit').data[0];
    return {
      quotaUsage: entry?.quota_usage ?? 0,
      quotaTotal: entry?.config?.quota_total ?? null,
      quotaDurationS: entry?.config?.quota_duration ?? null,
    };
  }

  async media(token: string, mediaId: string, fields = MEDIA_FIELDS): Promise<InstagramMedia> {
    return parse(
      igMedia,
      await this.t.call({ method: 'GET', path: `/${mediaId}`, token, query: { fields } }),
      'instagram media',
    );
  }

  async permalink(token: string, mediaId: string): Promise<string | null> {
    return (await this.media(token, mediaId, 'id,permalink')).permalink ?? null;
  }

  /** The account's newest media first: the "did it go through?" check after an ambiguous publish. */
  async recentMedia(token: string, igUserId: string, limit = 25): Promise<InstagramMedia[]> {
    const body = await this.t.call({
      method: 'GET',
      path: `/${igUserId}/media`,
      token,
      query: { fields: MEDIA_FIELDS, limit },
    });
    return parse(list(igMedia), body, 'instagram media list').data;
  }

  /** The account's live Stories, newest first: the "did it go through?" check of a Story (facts §2.7). */
  async recentStories(token: string, igUserId: string): Promise<InstagramMedia[]> {
    const body = await this.t.call({
      method: 'GET',
      path: `/${igUserId}/stories`,
      token,
      query: { fields: MEDIA_FIELDS },
    });
    return parse(list(igMedia), body, 'instagram stories').data;
  }

  private async create(
    token: string,
    igUserId: string,
    form: Record<string, string | boolean | undefined>,
  ): Promise<{ id: string }> {
    const body = await this.t.call({ method: 'POST', path: `/${igUserId}/media`, token, form });
    return parse(idOnly, body, 'media container');
  }
}
