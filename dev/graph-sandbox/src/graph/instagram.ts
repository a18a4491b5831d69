import { assertIgAccess, requireScope } from '../auth.ts';
import type { Ctx, RouteTable } from '../context.ts';
import { type NodeShape, paginate, renderNode } from '../fields.ts';
import { graphFailure, publishError, unsupportedGet } from '../graph-errors.ts';
import { requireString } from '../params.ts';
import type { IgMedia } from '../store.ts';
import type { World } from '../world.ts';
import { containerStatus, statusText } from './container-status.ts';
import { createContainer } from './instagram-containers.ts';
import { mediaShape } from './instagram-media.ts';

/**
 * Instagram publishing (facts §2): containers are created in instagram-containers.ts, published
 * here once FINISHED, and read back as media (instagram-media.ts).
 */
const DAY_MS = 86_400_000;

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
  const files =
    container.kind === 'CAROUSEL'
      ? container.children.flatMap((id) => world.store.containers.get(id)?.file ?? [])
      : container.file
        ? [container.file]
        : [];
  const first = files[0];
  const media: IgMedia = {
    id: world.ids.igMedia(),
    igId,
    shortcode: world.ids.shortcode(),
    caption: container.caption,
    mediaType: container.kind === 'CAROUSEL' ? 'CAROUSEL_ALBUM' : first?.kind === 'video' ? 'VIDEO' : 'IMAGE',
    productType: container.kind === 'REELS' ? 'REELS' : container.kind === 'STORIES' ? 'STORY' : 'FEED',
    media: files,
    options: container.options,
    createdAt: ctx.now,
    containerId: container.id,
    commentsEnabled: true,
  };
  world.store.igMedia.set(media.id, media);
  container.published = true;
  container.mediaId = media.id;
  // Reels and stories count toward the daily limit like posts (facts §2.5).
  world.store.publishTimes.get(igId)?.push(ctx.now);
  return { id: media.id };
}

/** The container media_publish names, refused as Meta refuses it: unknown, not ready, failed, over quota. */
function publishableContainer(world: World, igId: string, containerId: string) {
  const container = world.store.containers.get(containerId);
  const state = container ? containerStatus(world, container) : null;
  const status = state?.code ?? 'EXPIRED';
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
  if (status === 'ERROR') throw failedContainer(state?.failure ?? null);
  if (recentPublishes(world, igId).length >= world.config.publishQuota) {
    throw graphFailure(
      9,
      'You reached maximum number of posts that is allowed to be published by Content Publishing API.',
      { error_subcode: 2207042, is_transient: false },
    );
  }
  return container;
}

/**
 * Publishing an ERROR container. The facts do not say what Meta answers (§2.3 only gives the
 * status, §2.4 only the not-ready case), so the sandbox picks §2.8's -1/2207053, "unknown upload
 * error", whose remedy is the right one: a new container. 9007/2207027 would tell a client to poll
 * and retry a container that can never finish; the user text names the code the status carries.
 */
function failedContainer(failure: number | null) {
  return publishError(
    -1,
    2207053,
    'An unknown error occurred while uploading the media.',
    'Media upload failed',
    `The media failed processing (error code ${failure}). Create a new container and try again.`,
  );
}

export const instagramRoutes: RouteTable = {
  'POST instagram/media': createContainer,
  'POST instagram/media_publish': publish,
  'GET instagram/media': (ctx, igId) => {
    assertIgAccess(ctx.world, ctx.caller(), igId);
    // Stories are not media of the profile: they are listed on /stories (facts §2.7).
    const media = [...ctx.world.store.igMedia.values()]
      .filter((m) => m.igId === igId && m.productType !== 'STORY')
      .reverse();
    return paginate(media, ctx.pageRequest(), (m) => renderNode(mediaShape(ctx.world, m), ctx.fields));
  },
  'GET instagram/content_publishing_limit': (ctx, igId) => {
    requireScope(assertIgAccess(ctx.world, ctx.caller(), igId), 'instagram_content_publish', 10);
    const usage = recentPublishes(ctx.world, igId).length;
    const wantsConfig = ctx.fields?.some((f) => f.name === 'config') ?? false;
    const config = { quota_total: ctx.world.config.publishQuota, quota_duration: 86400 };
    return { data: [wantsConfig ? { quota_usage: usage, config } : { quota_usage: usage }] };
  },
  'GET instagram/stories': (ctx, igId) => {
    assertIgAccess(ctx.world, ctx.caller(), igId);
    // Live stories: the account's stories of the last 24 h, newest first (facts §2.7).
    const since = ctx.now - DAY_MS;
    const stories = [...ctx.world.store.igMedia.values()]
      .filter((m) => m.igId === igId && m.productType === 'STORY' && m.createdAt > since)
      .reverse();
    return paginate(stories, ctx.pageRequest(), (m) => renderNode(mediaShape(ctx.world, m), ctx.fields));
  },
  'GET container': (ctx, id) => {
    const container = ctx.world.store.containers.get(id);
    if (!container) throw unsupportedGet(id);
    assertIgAccess(ctx.world, ctx.caller(), container.igId);
    const state = containerStatus(ctx.world, container);
    const shape: NodeShape = {
      type: 'ShadowIGMediaBuilder',
      defaults: ['id'],
      fields: { id: () => id, status_code: () => state.code, status: () => statusText(state) },
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
