import type { Ctx } from '../context.ts';
import { invalidParam, requiredParam } from '../graph-errors.ts';
import { fetchMedia } from '../media-fetch.ts';
import { optionalBoolean, optionalInt, optionalString, requireString } from '../params.ts';
import type { PageVideo } from '../store.ts';
import { MAX_UPLOAD_BYTES, PAGE_VIDEO_RULES } from '../video-check.ts';
import type { ArrivedFile } from './instagram-video.ts';
import { checkPageVideo, newPageVideo, pageVideoArrived } from './page-video.ts';
import { pageWriter } from './pages.ts';

/**
 * `POST /{page-id}/videos` (facts §3.1): at once with `file_url` or a multipart `source`, or in
 * Meta's resumable phases: `start` (file_size) → `transfer` (chunks at the offsets Meta gives) →
 * `finish`. Offsets travel as strings of digits, as Meta sends them [O]. A file that is no video
 * at all is refused when it is complete [O: 100/2069019, "invalid file" in facts §3.2, whose
 * parent code the facts did not record].
 */
/** How much Meta asks for per transfer call [O]; a client may send less and is asked for the rest. */
const CHUNK_BYTES = 1024 * 1024;

function invalidFile(reason: string) {
  return invalidParam('(#100) The video file is invalid or in a format that is not supported.', 2069019, {
    is_transient: false,
    error_user_title: 'Invalid file',
    error_user_msg: `The file could not be used as a video (${reason}).`,
  });
}

const offsets = (received: number, fileSize: number) => ({
  start_offset: String(received),
  end_offset: String(Math.min(fileSize, received + CHUNK_BYTES)),
});

export async function postVideo(ctx: Ctx, pageId: string) {
  pageWriter(ctx, pageId);
  switch (optionalString(ctx.params, 'upload_phase')) {
    case undefined:
      return uploadAtOnce(ctx, pageId);
    case 'start':
      return startUpload(ctx, pageId);
    case 'transfer':
      return transferChunk(ctx, pageId);
    case 'finish':
      return finishUpload(ctx, pageId);
    default:
      throw invalidParam('(#100) Param upload_phase must be one of {start, transfer, finish}');
  }
}

/** A multipart file part, as @fastify/multipart hands it over (a Buffer); null when absent. */
function filePart(ctx: Ctx, name: string): Buffer | null {
  const value = ctx.params[name];
  return Buffer.isBuffer(value) ? value : null;
}

async function uploadAtOnce(ctx: Ctx, pageId: string) {
  const file = await fileFromParams(ctx);
  const verdict = await checkPageVideo(file, PAGE_VIDEO_RULES);
  if (!verdict.ok) throw invalidFile(verdict.reason);
  const video = describe(ctx, newPageVideo(ctx, pageId, 'video'));
  video.postId = `${pageId}_${video.id}`;
  pageVideoArrived(ctx.world, video, file, verdict);
  if (optionalBoolean(ctx.params, 'published', true)) video.publishAskedAt = ctx.now;
  return { id: video.id };
}

async function fileFromParams(ctx: Ctx): Promise<ArrivedFile> {
  const source = filePart(ctx, 'source');
  if (source) return { url: null, data: source, overLimit: source.length > MAX_UPLOAD_BYTES };
  const url = optionalString(ctx.params, 'file_url');
  if (!url) throw invalidParam('(#100) The parameter file_url or source is required');
  const fetched = await fetchMedia(url, ctx.world.config.fetchTimeoutMs, MAX_UPLOAD_BYTES);
  if (!fetched.ok) throw invalidParam(`(#100) file_url should represent a valid URL (${fetched.reason})`);
  return { url, data: fetched.data, overLimit: fetched.overLimit };
}

function describe(ctx: Ctx, video: PageVideo): PageVideo {
  video.title = optionalString(ctx.params, 'title') ?? video.title;
  video.description = optionalString(ctx.params, 'description') ?? video.description;
  return video;
}

function startUpload(ctx: Ctx, pageId: string) {
  const fileSize = optionalInt(ctx.params, 'file_size');
  if (fileSize === undefined) throw requiredParam('file_size');
  if (fileSize <= 0 || fileSize > MAX_UPLOAD_BYTES) {
    throw invalidParam(
      `(#100) Param file_size must be between 1 and ${MAX_UPLOAD_BYTES} (the sandbox's bound)`,
    );
  }
  const video = describe(ctx, newPageVideo(ctx, pageId, 'video'));
  video.upload = { fileSize, chunks: [], received: 0 };
  video.uploadSessionId = ctx.world.ids.uploadSession();
  return { video_id: video.id, ...offsets(0, fileSize), upload_session_id: video.uploadSessionId };
}

function sessionVideo(ctx: Ctx, pageId: string): PageVideo {
  const sessionId = requireString(ctx.params, 'upload_session_id');
  const video = [...ctx.world.store.pageVideos.values()].find(
    (v) => v.uploadSessionId === sessionId && v.pageId === pageId,
  );
  if (!video) throw invalidParam('(#100) Param upload_session_id is not a valid upload session of this Page');
  return video;
}

function transferChunk(ctx: Ctx, pageId: string) {
  const { upload } = sessionVideo(ctx, pageId);
  if (!upload || upload.fileSize === null) throw invalidParam('(#100) This upload session is finished');
  const chunk = filePart(ctx, 'video_file_chunk');
  if (!chunk) throw requiredParam('video_file_chunk');
  if (optionalInt(ctx.params, 'start_offset') !== upload.received) {
    throw invalidParam(`(#100) Param start_offset must be ${upload.received}, where the file continues`);
  }
  if (upload.received + chunk.length > upload.fileSize) {
    throw invalidParam('(#100) The chunk goes past the file_size given at start');
  }
  upload.chunks.push(chunk);
  upload.received += chunk.length;
  return offsets(upload.received, upload.fileSize);
}

async function finishUpload(ctx: Ctx, pageId: string) {
  const video = describe(ctx, sessionVideo(ctx, pageId));
  const { upload } = video;
  if (upload) {
    if (upload.received !== upload.fileSize) {
      throw invalidParam(`(#100) Only ${upload.received} of ${upload.fileSize} bytes were transferred`);
    }
    const file = { url: null, data: Buffer.concat(upload.chunks), overLimit: false };
    const verdict = await checkPageVideo(file, PAGE_VIDEO_RULES);
    if (!verdict.ok) throw invalidFile(verdict.reason);
    video.postId = `${pageId}_${video.id}`;
    pageVideoArrived(ctx.world, video, file, verdict);
  }
  if (optionalBoolean(ctx.params, 'published', true)) video.publishAskedAt ??= ctx.now;
  return { success: true };
}
