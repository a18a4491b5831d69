import type { Ctx } from '../context.ts';
import { invalidParam, publishError } from '../graph-errors.ts';
import { hostVideo } from '../hosted-files.ts';
import { fetchMedia } from '../media-fetch.ts';
import { optionalString } from '../params.ts';
import { awaitingFile, startProcessing, videoProcessingMs } from '../processing.ts';
import type { Container, NewContainer } from '../store.ts';
import { checkVideo, REEL_RULES, STORY_RULES, type VideoRules } from '../video-check.ts';
import type { World } from '../world.ts';

/**
 * Video containers: Reels, story videos and carousel videos (facts §2.1–2.6). Meta fetches the
 * file (or takes it through a resumable upload, uploads.ts) and processes it; a file it cannot
 * fetch fails the call, but a file it cannot publish only shows later, as an ERROR container
 * whose status carries 2207026.
 */
const FORMAT_UNSUPPORTED = 2207026;
/** Meta's subcode for a `thumb_offset` outside the video (facts §2.8, code 1). */
const THUMB_OFFSET_INVALID = 2207057;

/** Where the resumable upload of a container goes (facts §0.1: rupload's `ig-api-upload` path). */
function uploadUri(world: World, containerId: string): string {
  return `${world.config.publicUrl}/ig-api-upload/v25.0/${containerId}`;
}

export function mediaFetchFailed(reason: string) {
  return publishError(
    9004,
    2207052,
    "Media download has failed. The media URI doesn't meet our requirements.",
    'Media download failed',
    `The media could not be fetched from the URI: ${reason}.`,
  );
}

export const rulesFor = (c: Pick<Container, 'kind'>): VideoRules =>
  c.kind === 'STORIES' ? STORY_RULES : REEL_RULES;

export async function createVideoContainer(ctx: Ctx, base: NewContainer) {
  const { world } = ctx;
  const container: Container = {
    ...base,
    file: null,
    processing: awaitingFile(videoProcessingMs(world), ctx.req.processingFault),
    upload: null,
  };
  if (optionalString(ctx.params, 'upload_type') === 'resumable') {
    container.upload = { fileSize: null, chunks: [], received: 0 };
    world.store.containers.set(container.id, container);
    return { id: container.id, uri: uploadUri(world, container.id) };
  }
  const url = optionalString(ctx.params, 'video_url');
  if (!url) throw invalidParam('(#100) The parameter video_url is required.');
  const fetched = await fetchMedia(url, world.config.fetchTimeoutMs, rulesFor(container).maxBytes);
  if (!fetched.ok) throw mediaFetchFailed(fetched.reason);
  await fileArrived(world, container, { url, data: fetched.data, overLimit: fetched.overLimit });
  world.store.containers.set(container.id, container);
  return { id: container.id };
}

export interface ArrivedFile {
  /** The file's public URL; null for uploaded bytes, which the sandbox then hosts itself. */
  url: string | null;
  data: Buffer;
  /** More bytes than the rules allow came (only the first ones are in `data`). */
  overLimit: boolean;
}

/** All of the video is in (fetched, or uploaded to the rupload URI): check it and start processing. */
export async function fileArrived(world: World, c: Container, file: ArrivedFile): Promise<void> {
  const url = file.url ?? hostVideo(world, c.id, file.data);
  c.file = { kind: 'video', url };
  c.upload = null;
  startProcessing(c.processing, world.clock.now(), await videoFailure(world, c, file));
}

/** The code processing will end with, or null: 2207026 for any rule of facts §2.6 broken. */
async function videoFailure(world: World, c: Container, file: ArrivedFile): Promise<number | null> {
  const rules = rulesFor(c);
  const verdict = file.overLimit
    ? { ok: false as const, reason: `more than ${rules.maxBytes} bytes` }
    : await checkVideo(file.data, rules);
  if (!verdict.ok) {
    world.log.debug({ container: c.id, reason: verdict.reason }, 'video container will fail processing');
    return FORMAT_UNSUPPORTED;
  }
  const offsetMs = c.options.thumbOffsetMs;
  return offsetMs !== null && offsetMs > verdict.facts.durationMs ? THUMB_OFFSET_INVALID : null;
}
