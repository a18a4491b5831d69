import { assertPageAccess } from '../auth.ts';
import { unixSeconds } from '../clock.ts';
import type { Ctx, RouteTable } from '../context.ts';
import { paginate } from '../fields.ts';
import { invalidParam, requiredParam } from '../graph-errors.ts';
import { optionalString, requireString } from '../params.ts';
import type { PageStory, PageVideo, PageVideoKind } from '../store.ts';
import { PAGE_REEL_RULES, PAGE_STORY_RULES } from '../video-check.ts';
import type { World } from '../world.ts';
import type { ArrivedFile } from './instagram-video.ts';
import { checkPageVideo, newPageVideo, pageVideoArrived, videoOfPage } from './page-video.ts';
import { postVideo } from './page-video-upload.ts';
import { pageWriter } from './pages.ts';

/**
 * Page Reels and stories (facts §3.1; the phases follow Meta's Reels and Stories publishing guides
 * [O]): `upload_phase=start` → `{video_id, upload_url}`, the bytes POSTed to `upload_url` (the
 * sandbox's rupload path, uploads.ts), then `upload_phase=finish`. Reels answer
 * `{"success":true}` and publish when `video_state=PUBLISHED`; video stories answer
 * `{"success":true,"post_id"}`. Photo stories take an unpublished photo and are live at once.
 */

/** Where a Page video's bytes go (rupload's `video-upload` path, served by the sandbox). */
function videoUploadUrl(world: World, videoId: string): string {
  return `${world.config.publicUrl}/video-upload/v25.0/${videoId}`;
}

/** The file of a Reel or video story arrived at its upload_url: checked, then processed. */
export async function pageVideoFileArrived(world: World, video: PageVideo, file: ArrivedFile) {
  const rules = video.kind === 'story' ? PAGE_STORY_RULES : PAGE_REEL_RULES;
  pageVideoArrived(world, video, file, await checkPageVideo(file, rules));
}

function startPhase(ctx: Ctx, pageId: string, kind: PageVideoKind) {
  const video = newPageVideo(ctx, pageId, kind);
  video.upload = { fileSize: null, chunks: [], received: 0 };
  return { video_id: video.id, upload_url: videoUploadUrl(ctx.world, video.id) };
}

/** `finish` before every byte is in is refused [O]: Meta would have nothing to publish. */
function uploadedVideo(ctx: Ctx, pageId: string, kind: PageVideoKind): PageVideo {
  const video = videoOfPage(ctx.world, pageId, requireString(ctx.params, 'video_id'), kind);
  if (video.url === null) throw invalidParam('(#100) The video has not been uploaded to its upload_url yet');
  return video;
}

function finishReel(ctx: Ctx, pageId: string) {
  const video = uploadedVideo(ctx, pageId, 'reel');
  const state = optionalString(ctx.params, 'video_state');
  if (state === undefined) throw requiredParam('video_state');
  if (state === 'SCHEDULED') throw invalidParam('(#100) The sandbox does not support scheduled Reels');
  if (state !== 'PUBLISHED' && state !== 'DRAFT') {
    throw invalidParam('(#100) Param video_state must be one of {DRAFT, PUBLISHED, SCHEDULED}');
  }
  video.description = optionalString(ctx.params, 'description') ?? video.description;
  video.title = optionalString(ctx.params, 'title') ?? video.title;
  video.postId ??= `${pageId}_${video.id}`;
  if (state === 'PUBLISHED') video.publishAskedAt ??= ctx.now;
  return { success: true };
}

function addStory(ctx: Ctx, pageId: string, media: Pick<PageStory, 'photoId' | 'videoId'>): PageStory {
  const story: PageStory = { postId: ctx.world.ids.pagePostPart(), pageId, createdAt: ctx.now, ...media };
  ctx.world.store.pageStories.set(story.postId, story);
  return story;
}

function finishVideoStory(ctx: Ctx, pageId: string) {
  const video = uploadedVideo(ctx, pageId, 'story');
  if (video.postId === null) {
    video.postId = addStory(ctx, pageId, { photoId: null, videoId: video.id }).postId;
    video.publishAskedAt = ctx.now;
  }
  return { success: true, post_id: video.postId };
}

function phase(ctx: Ctx, pageId: string, kind: PageVideoKind, finish: (ctx: Ctx, pageId: string) => unknown) {
  pageWriter(ctx, pageId);
  const value = optionalString(ctx.params, 'upload_phase');
  if (value === 'start') return startPhase(ctx, pageId, kind);
  if (value === 'finish') return finish(ctx, pageId);
  if (value === undefined) throw requiredParam('upload_phase');
  throw invalidParam('(#100) Param upload_phase must be one of {start, finish}');
}

/** A story of an unpublished photo of the Page (`published=false`) [O]; any other photo_id → (#100). */
function photoStory(ctx: Ctx, pageId: string) {
  pageWriter(ctx, pageId);
  const photoId = requireString(ctx.params, 'photo_id');
  const photo = ctx.world.store.photos.get(photoId);
  if (!photo || photo.pageId !== pageId || photo.published) {
    throw invalidParam('(#100) Param photo_id must be an unpublished photo of this Page');
  }
  return { success: true, post_id: addStory(ctx, pageId, { photoId, videoId: null }).postId };
}

/**
 * The Page's stories, newest first, as Meta's Page Stories guide lists them [O]: `post_id`,
 * `status`, `creation_time` (Unix seconds, as a string), `media_type` (`photo` or `video`),
 * `media_id` (the photo or video made a story) and `url`. Stories live 24 h; the sandbox keeps them.
 */
function pageStories(ctx: Ctx, pageId: string) {
  assertPageAccess(ctx.world, ctx.caller(), pageId);
  const stories = [...ctx.world.store.pageStories.values()].filter((s) => s.pageId === pageId).reverse();
  return paginate(stories, ctx.pageRequest(), (story) => ({
    post_id: story.postId,
    status: 'PUBLISHED',
    creation_time: String(unixSeconds(story.createdAt)),
    media_type: story.photoId ? 'photo' : 'video',
    media_id: story.photoId ?? story.videoId,
    url: `https://www.facebook.com/stories/${pageId}/${story.postId}`,
  }));
}

export const pageVideoRoutes: RouteTable = {
  'GET page/stories': pageStories,
  'POST page/videos': postVideo,
  'POST page/video_reels': (ctx, pageId) => phase(ctx, pageId, 'reel', finishReel),
  'POST page/video_stories': (ctx, pageId) => phase(ctx, pageId, 'story', finishVideoStory),
  'POST page/photo_stories': photoStory,
};
