import type { FastifyInstance, FastifyReply, FastifyRequest } from 'fastify';
import { assertIgAccess, authenticate, type Caller, requirePageToken } from './auth.ts';
import { type ArrivedFile, fileArrived, rulesFor } from './graph/instagram-video.ts';
import { pageVideoFileArrived } from './graph/page-reels.ts';
import { GraphFailure } from './graph-errors.ts';
import { fetchMedia } from './media-fetch.ts';
import { accessTokenOf, type Params } from './params.ts';
import type { PendingUpload } from './store.ts';
import { MAX_UPLOAD_BYTES } from './video-check.ts';
import type { World } from './world.ts';

/**
 * Meta's upload host (rupload.facebook.com, facts §0.1, §2.2), served by the sandbox on its own
 * origin: `POST /ig-api-upload/{version}/{container-id}` for Instagram containers created with
 * `upload_type=resumable`, `POST /video-upload/{version}/{video-id}` for Page Reels and video
 * stories. The token comes in `Authorization: OAuth <token>`; the body is the file's bytes from
 * header `offset` on, of a file of header `file_size` bytes (several calls may share a file), or
 * header `file_url` names a public file to fetch instead. Success is `{"success":true}`; processing
 * starts when the last byte is in.
 *
 * Refusals use rupload's own envelope [?: remembered from Meta's upload errors, not in the facts]:
 * HTTP 400 `{"debug_info":{"retriable":false,"type":"…","message":"…"}}`. Outages, throttles and
 * faults answer as on any Graph path.
 */

class UploadRefusal extends Error {
  constructor(
    readonly type: 'AuthorizationError' | 'ProcessingFailedError',
    message: string,
  ) {
    super(message);
  }
}

interface UploadTarget {
  upload: PendingUpload;
  maxBytes: number;
  /** Throws (a GraphFailure) unless the caller may upload here. */
  authorize(caller: Caller): void;
  arrived(file: ArrivedFile): Promise<void>;
}

function containerTarget(world: World, id: string): UploadTarget | null {
  const container = world.store.containers.get(id);
  if (!container?.upload) return null;
  return {
    upload: container.upload,
    maxBytes: rulesFor(container).maxBytes,
    authorize: (caller) => assertIgAccess(world, caller, container.igId),
    arrived: (file) => fileArrived(world, container, file),
  };
}

function pageVideoTarget(world: World, id: string): UploadTarget | null {
  const video = world.store.pageVideos.get(id);
  if (!video?.upload || video.kind === 'video') return null;
  return {
    upload: video.upload,
    maxBytes: MAX_UPLOAD_BYTES,
    authorize: (caller) =>
      requirePageToken(
        caller,
        video.pageId,
        () => new UploadRefusal('AuthorizationError', "A Page access token of the video's Page is required."),
      ),
    arrived: (file) => pageVideoFileArrived(world, video, file),
  };
}

function header(req: FastifyRequest, name: string): string | undefined {
  const value = req.headers[name];
  return Array.isArray(value) ? value[0] : value;
}

/** A header that must be a whole number of bytes, or a refusal naming it. */
function byteCount(req: FastifyRequest, name: string): number {
  const text = header(req, name);
  if (text === undefined || !/^\d+$/.test(text.trim())) {
    throw new UploadRefusal('ProcessingFailedError', `Header ${name} must be a whole number of bytes.`);
  }
  return Number(text.trim());
}

function authorized(world: World, req: FastifyRequest, target: UploadTarget): void {
  try {
    target.authorize(authenticate(world, accessTokenOf(req, (req.query ?? {}) as Params), undefined));
  } catch (error) {
    if (error instanceof GraphFailure) throw new UploadRefusal('AuthorizationError', error.message);
    throw error;
  }
}

async function receive(world: World, req: FastifyRequest, target: UploadTarget) {
  authorized(world, req, target);
  const fileUrl = header(req, 'file_url');
  if (fileUrl) {
    const fetched = await fetchMedia(fileUrl, world.config.fetchTimeoutMs, target.maxBytes);
    if (!fetched.ok)
      throw new UploadRefusal('ProcessingFailedError', `file_url could not be fetched: ${fetched.reason}`);
    await target.arrived({ url: fileUrl, data: fetched.data, overLimit: fetched.overLimit });
    return { success: true };
  }
  const { upload } = target;
  const offset = byteCount(req, 'offset');
  const fileSize = byteCount(req, 'file_size');
  const bytes = Buffer.isBuffer(req.body) ? req.body : Buffer.alloc(0);
  if (fileSize === 0 || fileSize > target.maxBytes) {
    throw new UploadRefusal(
      'ProcessingFailedError',
      `file_size must be between 1 and ${target.maxBytes} bytes.`,
    );
  }
  if (upload.fileSize !== null && upload.fileSize !== fileSize) {
    throw new UploadRefusal(
      'ProcessingFailedError',
      `file_size changed: the upload is of ${upload.fileSize} bytes.`,
    );
  }
  if (offset !== upload.received) {
    throw new UploadRefusal(
      'ProcessingFailedError',
      `offset must be ${upload.received}: that many bytes have arrived.`,
    );
  }
  if (offset + bytes.length > fileSize) {
    throw new UploadRefusal('ProcessingFailedError', 'The bytes go past file_size.');
  }
  upload.fileSize = fileSize;
  upload.chunks.push(bytes);
  upload.received += bytes.length;
  if (upload.received === fileSize) {
    await target.arrived({ url: null, data: Buffer.concat(upload.chunks), overLimit: false });
  }
  return { success: true };
}

function refuse(reply: FastifyReply, refusal: UploadRefusal) {
  return reply
    .code(400)
    .send({ debug_info: { retriable: false, type: refusal.type, message: refusal.message } });
}

export function registerUploads(app: FastifyInstance, world: World): void {
  app.register(async (scope) => {
    // The body is the file itself, whatever content type the client names (curl's --data-binary
    // says application/x-www-form-urlencoded), so no parser of the Graph routes applies here.
    scope.removeAllContentTypeParsers();
    scope.addContentTypeParser('*', { parseAs: 'buffer', bodyLimit: MAX_UPLOAD_BYTES }, (_req, body, done) =>
      done(null, body),
    );
    scope.setErrorHandler((error, _req, reply) => {
      if (error instanceof UploadRefusal) return refuse(reply, error);
      throw error;
    });
    const routes: [string, (id: string) => UploadTarget | null][] = [
      ['ig-api-upload', (id) => containerTarget(world, id)],
      ['video-upload', (id) => pageVideoTarget(world, id)],
    ];
    for (const [prefix, find] of routes) {
      const handler = (req: FastifyRequest<{ Params: { id: string } }>) => {
        const target = find(req.params.id);
        if (!target)
          throw new UploadRefusal('ProcessingFailedError', `No upload is waiting for ${req.params.id}.`);
        return receive(world, req, target);
      };
      scope.post(`/${prefix}/:version/:id`, handler);
      scope.post(`/${prefix}/:id`, handler);
    }
  });
}
