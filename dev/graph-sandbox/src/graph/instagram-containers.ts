import { assertIgAccess, requireScope } from '../auth.ts';
import type { Ctx } from '../context.ts';
import { invalidParam, publishError } from '../graph-errors.ts';
import { fetchMedia } from '../media-fetch.ts';
import { listParam, optionalBoolean, optionalInt, optionalString } from '../params.ts';
import type { Container, NewContainer, PublishOptions } from '../store.ts';
import type { World } from '../world.ts';
import { createVideoContainer, mediaFetchFailed } from './instagram-video.ts';

/**
 * `POST /{ig-user-id}/media` (facts §2.2): images, carousels, Reels, stories and carousel videos.
 * Images are fetched and checked at once and fail the call (as the sandbox always did); videos
 * are fetched at once too, but a file Instagram would refuse only fails processing (instagram-video.ts).
 */
const MAX_IMAGE_BYTES = 8 * 1024 * 1024;
const MAX_COLLABORATORS = 3;

export async function createContainer(ctx: Ctx, igId: string) {
  requireScope(assertIgAccess(ctx.world, ctx.caller(), igId), 'instagram_content_publish', 10);
  const mediaType = optionalString(ctx.params, 'media_type');
  const isItem = optionalBoolean(ctx.params, 'is_carousel_item', false);
  switch (mediaType) {
    case undefined:
    case 'IMAGE':
      return createImage(ctx, newContainer(ctx, igId, isItem ? 'CAROUSEL_ITEM' : 'IMAGE'));
    case 'CAROUSEL':
      return createCarousel(ctx, newContainer(ctx, igId, 'CAROUSEL'));
    case 'REELS':
      // A Reel cannot be a carousel child (facts §2.6): it is refused when a parent names it.
      return createVideoContainer(ctx, await withCover(ctx, newContainer(ctx, igId, 'REELS')));
    case 'STORIES':
      return wantsVideo(ctx)
        ? createVideoContainer(ctx, newContainer(ctx, igId, 'STORIES'))
        : createImage(ctx, newContainer(ctx, igId, 'STORIES'));
    case 'VIDEO':
      if (!isItem) throw standaloneVideo();
      return createVideoContainer(ctx, newContainer(ctx, igId, 'CAROUSEL_ITEM'));
    default:
      throw invalidParam('(#100) Only photo or video can be accepted as media type.', 2207023);
  }
}

const wantsVideo = (ctx: Ctx) =>
  optionalString(ctx.params, 'video_url') !== undefined ||
  optionalString(ctx.params, 'upload_type') === 'resumable';

/**
 * `VIDEO` is only a carousel child since 2023 (facts §2.2) [O: the error Meta answers, seen in
 * MookieLian/n8n-nodes-instagram issue 9].
 */
function standaloneVideo() {
  return invalidParam('Invalid parameter', 2207089, {
    is_transient: false,
    error_user_title: 'Carousel item cannot be published standalone',
    error_user_msg:
      'Media created with media_type=VIDEO is a carousel item and cannot be published as a standalone post. To publish a standalone video, use media_type=REELS instead.',
  });
}

/** Caption and options, kept only where Meta takes them (facts §2.2); stories and children take none. */
function newContainer(ctx: Ctx, igId: string, kind: Container['kind']): NewContainer {
  const keepsCaption = kind === 'IMAGE' || kind === 'REELS' || kind === 'CAROUSEL';
  const caption = keepsCaption ? (optionalString(ctx.params, 'caption') ?? null) : null;
  checkCaption(caption);
  return {
    id: ctx.world.ids.container(),
    igId,
    kind,
    children: [],
    caption,
    options: publishOptions(ctx, kind, keepsCaption),
    createdAt: ctx.now,
    published: false,
    mediaId: null,
  };
}

function publishOptions(ctx: Ctx, kind: Container['kind'], isPost: boolean): PublishOptions {
  const reel = kind === 'REELS';
  const given = (name: string) => optionalString(ctx.params, name) !== undefined;
  const thumbOffsetMs = reel ? thumbOffset(ctx) : null;
  const collaborators = isPost ? listParam(ctx.params, 'collaborators').map((u) => u.trim()) : [];
  if (collaborators.length > MAX_COLLABORATORS) {
    throw invalidParam(`(#100) Param collaborators can name at most ${MAX_COLLABORATORS} usernames`);
  }
  const locationId = isPost ? (optionalString(ctx.params, 'location_id') ?? null) : null;
  if (locationId !== null && !/^\d+$/.test(locationId)) {
    throw invalidParam('(#100) Param location_id must be a valid Page ID');
  }
  return {
    shareToFeed: reel && given('share_to_feed') ? optionalBoolean(ctx.params, 'share_to_feed', true) : null,
    coverUrl: reel ? (optionalString(ctx.params, 'cover_url') ?? null) : null,
    thumbOffsetMs,
    collaborators,
    locationId,
    audioName: reel ? (optionalString(ctx.params, 'audio_name') ?? null) : null,
  };
}

/** `thumb_offset` is milliseconds into the video; anything else is Meta's 1/2207057 (facts §2.8). */
function thumbOffset(ctx: Ctx): number | null {
  const text = optionalString(ctx.params, 'thumb_offset');
  if (text === undefined) return null;
  const offsetMs = /^\d+$/.test(text) ? optionalInt(ctx.params, 'thumb_offset') : undefined;
  if (offsetMs === undefined) {
    throw publishError(
      1,
      2207057,
      'The thumbnail offset is invalid.',
      'Invalid thumbnail offset',
      'The thumbnail offset must be a number of milliseconds within the video.',
    );
  }
  return offsetMs;
}

/** Meta fetches a Reel's cover like any media URL [O: the facts name no cover check]; unreachable → 9004/2207052. */
async function withCover(ctx: Ctx, container: NewContainer): Promise<NewContainer> {
  const { coverUrl } = container.options;
  if (coverUrl === null) return container;
  const cover = await fetchMedia(coverUrl, ctx.world.config.fetchTimeoutMs, MAX_IMAGE_BYTES);
  if (!cover.ok) throw mediaFetchFailed(cover.reason);
  return container;
}

function checkCaption(caption: string | null): void {
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

async function createImage(ctx: Ctx, container: NewContainer) {
  const url = optionalString(ctx.params, 'image_url');
  if (!url) {
    const story = container.kind === 'STORIES';
    throw invalidParam(`(#100) The parameter ${story ? 'image_url or video_url' : 'image_url'} is required.`);
  }
  // Story images are shown full screen: the feed's 4:5–1.91:1 bound does not apply to them [O].
  await checkImage(ctx.world, url, container.kind !== 'STORIES');
  return saveImageLike(ctx, { ...container }, { kind: 'image', url });
}

async function createCarousel(ctx: Ctx, container: NewContainer) {
  return saveImageLike(ctx, { ...container, children: carouselChildren(ctx, container.igId) }, null);
}

/** Images and carousel parents take the run-time `image_processing_ms`, else the fixed container time. */
function saveImageLike(ctx: Ctx, container: NewContainer, file: Container['file']) {
  const durationMs = ctx.world.store.runConfig.image_processing_ms ?? ctx.world.config.containerProcessingMs;
  const processing = { durationMs, readyAt: ctx.now + durationMs, failure: ctx.req.processingFault };
  const saved: Container = { ...container, file, processing, upload: null };
  ctx.world.store.containers.set(saved.id, saved);
  return { id: saved.id };
}

/** Children: 2–10 unpublished carousel items of the account, images and videos mixed (facts §2.6). */
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

/** Meta fetches the image and refuses what Instagram cannot publish (facts §2.6, §2.8). */
async function checkImage(world: World, url: string, checkAspect: boolean): Promise<void> {
  const media = await fetchMedia(url, world.config.fetchTimeoutMs);
  if (!media.ok) throw mediaFetchFailed(media.reason);
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
  if (checkAspect && (ratio < 0.8 || ratio > 1.91)) {
    throw publishError(
      36003,
      2207009,
      'The aspect ratio is not supported.',
      'Unsupported aspect ratio',
      "This image's aspect ratio cannot be published. Use a ratio between 4:5 and 1.91:1.",
    );
  }
}
