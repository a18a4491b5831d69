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

  async createCarouselItem(token: string, igUserId: string, input: { imageUrl: string }) {
    return this.create(token, igUserId, { image_url: input.imageUrl, is_carousel_item: true });
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

  private async create(
    token: string,
    igUserId: string,
    form: Record<string, string | boolean | undefined>,
  ): Promise<{ id: string }> {
    const body = await this.t.call({ method: 'POST', path: `/${igUserId}/media`, token, form });
    return parse(idOnly, body, 'media container');
  }
}
