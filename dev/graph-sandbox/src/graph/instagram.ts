import { assertIgAccess, requireScope } from '../auth.ts';
import { graphTime } from '../clock.ts';
import type { Ctx, RouteTable } from '../context.ts';
import { type NodeShape, paginate, renderNode } from '../fields.ts';
import { graphFailure, invalidParam, publishError, unsupportedGet } from '../graph-errors.ts';
import { fetchMedia } from '../media-fetch.ts';
import { listParam, optionalBoolean, optionalString, requireString } from '../params.ts';
import type { Container, IgMedia } from '../store.ts';
import type { World } from '../world.ts';

const DAY_MS = 86_400_000;
const MAX_IMAGE_BYTES = 8 * 1024 * 1024;

type ContainerStatus = 'IN_PROGRESS' | 'FINISHED' | 'PUBLISHED' | 'EXPIRED';

function containerStatus(world: World, c: Container): ContainerStatus {
  const now = world.clock.now();
  if (c.published) return 'PUBLISHED';
  if (now - c.createdAt > DAY_MS) return 'EXPIRED';
  const childrenReady = c.children.every((id) => {
    const child = world.store.containers.get(id);
    return child !== undefined && child.readyAt <= now;
  });
  return now < c.readyAt || !childrenReady ? 'IN_PROGRESS' : 'FINISHED';
}

const STATUS_TEXT: Record<ContainerStatus, string> = {
  IN_PROGRESS: 'In Progress: Media is still being processed.',
  FINISHED: 'Finished: Media has been uploaded and it is ready to be published.',
  PUBLISHED: 'Published: Media has been published.',
  EXPIRED: 'Expired: Media was not published within 24 hours.',
};

/** Meta fetches the image and refuses what Instagram cannot publish (facts §2.6, §2.8). */
async function checkImage(world: World, url: string): Promise<void> {
  const media = await fetchMedia(url, world.config.fetchTimeoutMs);
  if (!media.ok) {
    throw publishError(
      9004,
      2207052,
      "Media download has failed. The media URI doesn't meet our requirements.",
      'Media download failed',
      `The media could not be fetched from the URI: ${media.reason}.`,
    );
  }
  if (media.format !== 'jpeg' || media.width === 0) {
    throw publishError(
      36001,
      2207005,
      'The image format is not supported.',
      'Unsupported format',
      'The image format is not supported. Use a JPEG image.',
    );
  }
  if (media.bytes > MAX_IMAGE_BYTES) {
    throw publishError(
      36000,
      2207004,
      'The image size is too large.',
      'Image too large',
      'The image is larger than 8 MB.',
    );
  }
  const ratio = media.width / media.height;
  if (ratio < 0.8 || ratio > 1.91) {
    throw publishError(
      36003,
      2207009,
      'The aspect ratio is not supported.',
      'Unsupported aspect ratio',
      "This image's aspect ratio cannot be published. Use a ratio between 4:5 and 1.91:1.",
    );
  }
}

function checkCaption(caption: string | undefined): void {
  if (caption && [...caption].length > 2200) {
    throw publishError(
      36004,
      2207010,
      'The caption is too long.',
      'Caption too long',
      'Captions can be at most 2,200 characters.',
    );
  }
}

function carouselChildren(ctx: Ctx, igId: string): string[] {
  const children = listParam(ctx.params, 'children');
  const valid = children.every((id) => {
    const child = ctx.world.store.containers.get(id);
    return child?.igId === igId && child.kind === 'CAROUSEL_ITEM' && !child.published;
  });
  if (!valid || children.length < 2 || children.length > ctx.world.config.carouselMax) {
    throw invalidParam('Invalid parameter', 2207028, {
      error_user_title: 'Carousel items invalid',
      error_user_msg: `A carousel needs between 2 and ${ctx.world.config.carouselMax} photos or videos.`,
    });
  }
  return children;
}

async function createContainer(ctx: Ctx, igId: string) {
  requireScope(assertIgAccess(ctx.world, ctx.caller(), igId), 'instagram_content_publish', 10);
  const mediaType = optionalString(ctx.params, 'media_type');
  const caption = optionalString(ctx.params, 'caption');
  const isItem = optionalBoolean(ctx.params, 'is_carousel_item', false);
  let imageUrl: string | null = null;
  let children: string[] = [];
  if (mediaType === 'CAROUSEL') {
    children = carouselChildren(ctx, igId);
  } else if (mediaType === undefined || mediaType === 'IMAGE') {
    imageUrl = optionalString(ctx.params, 'image_url') ?? null;
    if (!imageUrl) throw invalidParam('(#100) The parameter image_url is required.');
    await checkImage(ctx.world, imageUrl);
  } else {
    throw invalidParam('(#100) Only photo or video can be accepted as media type.', 2207023);
  }
  checkCaption(caption);
  const now = ctx.now;
  const container: Container = {
    id: ctx.world.ids.container(),
    igId,
    kind: mediaType === 'CAROUSEL' ? 'CAROUSEL' : isItem ? 'CAROUSEL_ITEM' : 'IMAGE',
    imageUrl,
    children,
    caption: isItem ? null : (caption ?? null),
    createdAt: now,
    readyAt: now + ctx.world.config.containerProcessingMs,
    published: false,
    mediaId: null,
  };
  ctx.world.store.containers.set(container.id, container);
  return { id: container.id };
}

function recentPublishes(world: World, igId: string): number[] {
  const since = world.clock.now() - DAY_MS;
  const times = (world.store.publishTimes.get(igId) ?? []).filter((t) => t > since);
  world.store.publishTimes.set(igId, times);
  return times;
}

function publish(ctx: Ctx, igId: string) {
  requireScope(assertIgAccess(ctx.world, ctx.caller(), igId), 'instagram_content_publish', 10);
  const { world } = ctx;
  const container = publishableContainer(world, igId, requireString(ctx.params, 'creation_id'));
  const urls =
    container.kind === 'CAROUSEL'
      ? container.children.map((id) => world.store.containers.get(id)?.imageUrl ?? '')
      : [container.imageUrl ?? ''];
  const media: IgMedia = {
    id: world.ids.igMedia(),
    igId,
    shortcode: world.ids.shortcode(),
    caption: container.caption,
    mediaType: container.kind === 'CAROUSEL' ? 'CAROUSEL_ALBUM' : 'IMAGE',
    mediaUrls: urls,
    createdAt: ctx.now,
    containerId: container.id,
    commentsEnabled: true,
  };
  world.store.igMedia.set(media.id, media);
  container.published = true;
  container.mediaId = media.id;
  world.store.publishTimes.get(igId)?.push(ctx.now);
  return { id: media.id };
}

/** The container media_publish names, refused as Meta refuses it: unknown, not ready, over quota. */
function publishableContainer(world: World, igId: string, containerId: string) {
  const container = world.store.containers.get(containerId);
  const status = container ? containerStatus(world, container) : 'EXPIRED';
  if (
    !container ||
    container.igId !== igId ||
    container.kind === 'CAROUSEL_ITEM' ||
    status === 'EXPIRED' ||
    status === 'PUBLISHED'
  ) {
    throw publishError(
      24,
      2207008,
      'The media container does not exist, has expired or was already published.',
      'Media not found',
      'Create the media again and retry.',
    );
  }
  if (status === 'IN_PROGRESS') {
    throw publishError(
      9007,
      2207027,
      'The media is not ready for publishing, please wait for a moment',
      'Media not ready',
      'The media is still being processed.',
    );
  }
  if (recentPublishes(world, igId).length >= world.config.publishQuota) {
    throw graphFailure(
      9,
      'You reached maximum number of posts that is allowed to be published by Content Publishing API.',
      { error_subcode: 2207042, is_transient: false },
    );
  }
  return container;
}

function mediaShape(world: World, media: IgMedia): NodeShape {
  const account = world.store.igAccounts.get(media.igId);
  const comments = () => [...world.store.comments.values()].filter((c) => c.objectId === media.id);
  return {
    type: 'IGMedia',
    defaults: ['id'],
    fields: {
      id: () => media.id,
      caption: () => media.caption ?? undefined,
      media_type: () => media.mediaType,
      media_product_type: () => 'FEED',
      media_url: () => media.mediaUrls[0],
      permalink: () => `${world.config.publicUrl}/p/${media.shortcode}/`,
      shortcode: () => media.shortcode,
      timestamp: () => graphTime(media.createdAt),
      username: () => account?.username,
      like_count: () => 0,
      comments_count: () => comments().length,
      is_comment_enabled: () => media.commentsEnabled,
      owner: () => ({ id: media.igId }),
      children: () =>
        media.mediaType === 'CAROUSEL_ALBUM'
          ? {
              data: media.mediaUrls.map((url, i) => ({
                id: `${media.id}${i}`,
                media_type: 'IMAGE',
                media_url: url,
              })),
            }
          : undefined,
    },
  };
}

export const instagramRoutes: RouteTable = {
  'POST instagram/media': createContainer,
  'POST instagram/media_publish': publish,
  'GET instagram/media': (ctx, igId) => {
    assertIgAccess(ctx.world, ctx.caller(), igId);
    const media = [...ctx.world.store.igMedia.values()].filter((m) => m.igId === igId).reverse();
    return paginate(media, ctx.pageRequest(), (m) => renderNode(mediaShape(ctx.world, m), ctx.fields));
  },
  'GET instagram/content_publishing_limit': (ctx, igId) => {
    requireScope(assertIgAccess(ctx.world, ctx.caller(), igId), 'instagram_content_publish', 10);
    const usage = recentPublishes(ctx.world, igId).length;
    const wantsConfig = ctx.fields?.some((f) => f.name === 'config') ?? false;
    const config = { quota_total: ctx.world.config.publishQuota, quota_duration: 86400 };
    return { data: [wantsConfig ? { quota_usage: usage, config } : { quota_usage: usage }] };
  },
  'GET container': (ctx, id) => {
    const container = ctx.world.store.containers.get(id);
    if (!container) throw unsupportedGet(id);
    assertIgAccess(ctx.world, ctx.caller(), container.igId);
    const status = containerStatus(ctx.world, container);
    const shape: NodeShape = {
      type: 'ShadowIGMediaBuilder',
      defaults: ['id'],
      fields: { id: () => id, status_code: () => status, status: () => STATUS_TEXT[status] },
    };
    return renderNode(shape, ctx.fields);
  },
  'GET ig_media': (ctx, id) => {
    const media = ctx.world.store.igMedia.get(id);
    if (!media) throw unsupportedGet(id);
    assertIgAccess(ctx.world, ctx.caller(), media.igId);
    return renderNode(mediaShape(ctx.world, media), ctx.fields);
  },
};
