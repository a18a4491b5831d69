import { assertPageAccess } from '../auth.ts';
import { graphTime, unixSeconds } from '../clock.ts';
import type { Ctx, RouteTable } from '../context.ts';
import { type NodeShape, paginate, renderNode } from '../fields.ts';
import { invalidParam, unsupportedGet } from '../graph-errors.ts';
import { hostVideo } from '../hosted-files.ts';
import {
  awaitingFile,
  type ProcessingState,
  processingState,
  startProcessing,
  videoProcessingMs,
} from '../processing.ts';
import type { PageVideo, PageVideoKind } from '../store.ts';
import { checkVideo, type VideoRules, type VideoVerdict } from '../video-check.ts';
import type { World } from '../world.ts';
import type { ArrivedFile } from './instagram-video.ts';

/**
 * Page videos (facts §3.1): feed videos (`/videos`), Reels (`/video_reels`) and video stories
 * (`/video_stories`). Each is processed for `video_processing_ms` once its bytes are in, and is
 * published when processing ends well and the app asked for it. `GET /{video-id}?fields=status`
 * shows the phases the way Meta's Reels guide does [O: the facts only name the endpoints].
 */

/**
 * What processing ends with when the file breaks the rules: Facebook's video upload failure, 6000
 * "There was a problem uploading your video file" [O: the facts have no Page video codes].
 */
const VIDEO_UPLOAD_FAILED = 6000;
const FAILURE_TEXT = 'There was a problem uploading your video file. Please try again with another file.';

export function newPageVideo(ctx: Ctx, pageId: string, kind: PageVideoKind): PageVideo {
  const video: PageVideo = {
    id: ctx.world.ids.pageVideo(),
    pageId,
    kind,
    title: null,
    description: null,
    url: null,
    upload: null,
    uploadSessionId: null,
    createdAt: ctx.now,
    processing: awaitingFile(videoProcessingMs(ctx.world), ctx.req.processingFault),
    publishAskedAt: null,
    postId: null,
  };
  ctx.world.store.pageVideos.set(video.id, video);
  return video;
}

export async function checkPageVideo(file: ArrivedFile, rules: VideoRules): Promise<VideoVerdict> {
  if (file.overLimit) return { ok: false, reason: `more than ${rules.maxBytes} bytes` };
  return checkVideo(file.data, rules);
}

/** The whole file is in: processing starts, to fail with 6000 when the verdict refused the file. */
export function pageVideoArrived(world: World, video: PageVideo, file: ArrivedFile, verdict: VideoVerdict) {
  video.url = file.url ?? hostVideo(world, video.id, file.data);
  video.upload = null;
  if (!verdict.ok)
    world.log.debug({ video: video.id, reason: verdict.reason }, 'page video will fail processing');
  startProcessing(video.processing, world.clock.now(), verdict.ok ? null : VIDEO_UPLOAD_FAILED);
}

/** When the video went live: processing done and publication asked for; null while it is not. */
export function publishedAt(world: World, video: PageVideo): number | null {
  const { readyAt } = video.processing;
  if (processingState(video.processing, world.clock.now()) !== 'done' || video.publishAskedAt === null)
    return null;
  return Math.max(readyAt ?? 0, video.publishAskedAt);
}

export function videoPermalink(world: World, video: PageVideo): string {
  const base = world.config.publicUrl;
  if (video.kind === 'reel') return `${base}/reel/${video.id}`;
  if (video.kind === 'story') return `${base}/stories/${video.pageId}/${video.postId ?? video.id}/`;
  return `${base}/${video.pageId}/videos/${video.id}`;
}

const PROCESSING_PHASE: Record<ProcessingState, string> = {
  waiting: 'not_started',
  processing: 'in_progress',
  done: 'complete',
  failed: 'error',
};

function publishingPhase(video: PageVideo, state: ProcessingState, live: number | null) {
  if (live !== null)
    return { status: 'complete', publish_status: 'published', publish_time: unixSeconds(live) };
  const asked = video.publishAskedAt !== null && state !== 'failed';
  return { status: asked ? 'in_progress' : 'not_started' };
}

/** The `status` field: the upload, processing and publishing phases and a summary `video_status`. */
function videoStatus(world: World, video: PageVideo) {
  const state = processingState(video.processing, world.clock.now());
  const failed = state === 'failed';
  const errors = failed ? [{ code: video.processing.failure, message: FAILURE_TEXT }] : undefined;
  return {
    video_status: failed ? 'error' : state === 'done' ? 'ready' : 'processing',
    uploading_phase: video.upload
      ? { status: 'in_progress', bytes_transferred: video.upload.received }
      : { status: 'complete' },
    processing_phase: { status: PROCESSING_PHASE[state], errors },
    publishing_phase: publishingPhase(video, state, publishedAt(world, video)),
  };
}

function videoShape(world: World, video: PageVideo): NodeShape {
  const live = () => publishedAt(world, video) !== null;
  return {
    type: 'Video',
    defaults: ['id', 'description', 'updated_time'],
    fields: {
      id: () => video.id,
      title: () => video.title ?? undefined,
      description: () => video.description ?? undefined,
      created_time: () => graphTime(video.createdAt),
      updated_time: () => graphTime(video.processing.readyAt ?? video.createdAt),
      status: () => videoStatus(world, video),
      published: () => live(),
      permalink_url: () => videoPermalink(world, video),
      post_id: () => (live() ? (video.postId ?? undefined) : undefined),
      source: () => (live() ? (video.url ?? undefined) : undefined),
    },
  };
}

/** The Page's video named by a `video_id` parameter, of the kind the edge handles; (#100) otherwise. */
export function videoOfPage(world: World, pageId: string, videoId: string, kind: PageVideoKind): PageVideo {
  const video = world.store.pageVideos.get(videoId);
  if (!video || video.pageId !== pageId || video.kind !== kind) {
    throw invalidParam(`(#100) Param video_id must be a video of this Page uploaded with upload_phase=start`);
  }
  return video;
}

export const pageVideoReadRoutes: RouteTable = {
  /** The Page's feed videos, newest first (facts §3.1 lists the edge; its fields are a Video's). */
  'GET page/videos': (ctx, pageId) => {
    assertPageAccess(ctx.world, ctx.caller(), pageId);
    const videos = [...ctx.world.store.pageVideos.values()]
      .filter((v) => v.pageId === pageId && v.kind === 'video')
      .reverse();
    return paginate(videos, ctx.pageRequest(), (v) => renderNode(videoShape(ctx.world, v), ctx.fields));
  },
  'GET page_video': (ctx, id) => {
    const video = ctx.world.store.pageVideos.get(id);
    if (!video) throw unsupportedGet(id);
    assertPageAccess(ctx.world, ctx.caller(), video.pageId);
    return renderNode(videoShape(ctx.world, video), ctx.fields);
  },
};
