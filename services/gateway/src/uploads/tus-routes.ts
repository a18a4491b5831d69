import type { Readable } from 'node:stream';
import type { MediaUpload } from '@svc/contracts';
import { errors, ServiceError } from '@svc/errors';
import { isId } from '@svc/ids';
import { ConcurrencySlots } from '@svc/ops';
import type { FastifyInstance, FastifyReply, FastifyRequest } from 'fastify';
import { enforcePermission } from '../auth/permissions.ts';
import { grpcCaller, type Principal } from '../auth/principal.ts';
import type { PublishingClient } from '../clients.ts';
import {
  byteCount,
  checkPatchType,
  checkTusResumable,
  httpDate,
  OFFSET_OCTET_STREAM,
  parseMetadata,
  TUS_EXTENSIONS,
  TUS_VERSION,
  TusRefusal,
} from './tus-protocol.ts';
import { UPLOAD_DOORS, type UploadDoor } from './upload-doors.ts';
import { COMPLETING_DEADLINE_MS, sendParts } from './upload-parts.ts';

export interface TusLimits {
  /** The largest file (MEDIA_VIDEO_MAX_BYTES): Tus-Max-Size. */
  videoMaxBytes: number;
  /** PATCHes passing through this process at once, per partner and in all (429 beyond). */
  perPartner: number;
  total: number;
}

/**
 * Resumable uploads, tus 1.0.0 with creation, termination and expiration: `POST /v1/uploads`
 * (Upload-Length, Upload-Metadata with `workspace` and an optional `filename`) creates one in
 * publishing; `HEAD` says how far it got; `PATCH` appends a body at its offset, streaming it to
 * publishing in 1 MiB parts (a broken PATCH keeps every part that arrived, and the client resumes
 * from the offset HEAD gives); the PATCH that brings the last byte makes the media (its id in
 * `Media-Id`); `GET` answers the upload as JSON with the media once made; `DELETE` ends it.
 * The widget reaches the same at `/v1/embed/uploads` with its embed session (its workspace is the
 * session's): one implementation behind two doors (`upload-doors.ts`), sharing the PATCH slots.
 * A route module rather than operations: the bodies are raw streams and HEAD and OPTIONS are
 * part of the protocol. Authenticated like every /v1 route (not OPTIONS, which tus clients ask
 * before anything); an upload belongs to its partner and workspace as media do (another's is 404).
 * The widget's calls come from its own frame on our origin, so its door answers no CORS headers,
 * like the rest of `/v1/embed/*` (a partner's page never uploads with the session's token).
 */
export function tusRoutes(publishing: PublishingClient, limits: TusLimits) {
  const slots = new ConcurrencySlots({
    what: 'upload parts',
    perKey: limits.perPartner,
    total: limits.total,
    retryAfterSeconds: 1,
  });
  return async (scope: FastifyInstance) => {
    // The body stays a stream, read as publishing takes it (never buffered, so no body limit).
    scope.addContentTypeParser(OFFSET_OCTET_STREAM, (_request, payload, done) => done(null, payload));
    scope.addHook('onSend', async (_request, reply, payload) => {
      reply.header('Tus-Resumable', TUS_VERSION);
      return payload;
    });
    for (const door of UPLOAD_DOORS) routesAt(scope, new TusHandlers(publishing, limits, slots, door));
  };
}

function routesAt(scope: FastifyInstance, tus: TusHandlers): void {
  const { base } = tus.door;
  const one = `${base}/:id`;
  scope.options(base, tus.capabilities);
  scope.options(one, tus.capabilities);
  scope.post(base, tus.create);
  scope.head(one, tus.head);
  scope.patch(one, { preParsing: async (request) => checkPatch(request) }, tus.patch);
  scope.get(one, { exposeHeadRoute: false }, tus.read);
  scope.delete(one, tus.remove);
}

/** Tus's checks of a PATCH, made before its body is read. */
function checkPatch(request: FastifyRequest): void {
  checkTusResumable(request.headers);
  checkPatchType(request.headers);
}

/** The protocol's requests at one door: the door decides who may call and in which workspace. */
class TusHandlers {
  constructor(
    private readonly publishing: PublishingClient,
    private readonly limits: TusLimits,
    private readonly slots: ConcurrencySlots,
    readonly door: UploadDoor,
  ) {}

  capabilities = async (_request: FastifyRequest, reply: FastifyReply) =>
    reply
      .code(204)
      .header('Tus-Version', TUS_VERSION)
      .header('Tus-Extension', TUS_EXTENSIONS)
      .header('Tus-Max-Size', String(this.limits.videoMaxBytes))
      .send();

  create = async (request: FastifyRequest, reply: FastifyReply) => {
    const principal = this.principalOf(request);
    checkTusResumable(request.headers);
    if (request.headers['upload-defer-length'] !== undefined)
      throw errors.validation(
        'Upload-Length',
        'Upload-Length is required (a deferred length is not supported)',
      );
    const length = byteCount(request.headers, 'Upload-Length');
    const maxBytes = this.limits.videoMaxBytes;
    if (length > maxBytes)
      throw new TusRefusal(413, 'Upload-Length', errors.fileTooLarge('file', maxBytes).message);
    const metadata = parseMetadata(singleHeader(request.headers['upload-metadata']));
    const workspaceId = this.door.workspaceOf(principal, metadata.workspace || undefined);
    const { upload } = await this.publishing.startUpload({
      caller: grpcCaller(principal),
      workspaceId,
      length: BigInt(length),
      filename: metadata.filename ?? '',
    });
    const started = present(upload);
    return reply
      .code(201)
      .header('Location', `${this.door.base}/${started.id}`)
      .header('Upload-Offset', '0')
      .header('Upload-Expires', httpDate(started.expiresAt))
      .type('application/json; charset=utf-8')
      .send(uploadJson(started));
  };

  head = async (request: FastifyRequest, reply: FastifyReply) => {
    checkTusResumable(request.headers);
    const upload = await this.current(request);
    reply.header('Upload-Offset', String(upload.offset)).header('Cache-Control', 'no-store');
    if (upload.length !== undefined) reply.header('Upload-Length', String(upload.length));
    return reply.header('Upload-Expires', httpDate(upload.expiresAt)).code(200).send();
  };

  patch = async (request: FastifyRequest, reply: FastifyReply) => {
    const offset = byteCount(request.headers, 'Upload-Offset');
    const upload = await this.current(request);
    if (Number(upload.offset) !== offset)
      throw errors.conflict(`Upload-Offset ${offset} does not match the upload's offset ${upload.offset}`);
    const length = upload.length === undefined ? null : Number(upload.length);
    const sending = Number(request.headers['content-length'] ?? 0);
    if (length !== null && offset + sending > length)
      throw errors.validation('Content-Length', `the part would end past Upload-Length (${length} bytes)`);
    const principal = this.principalOf(request);
    const release = this.slots.claim(principal.partnerId);
    try {
      const target = { caller: grpcCaller(principal), uploadId: upload.id, offset, length };
      const sent = await sendParts(this.publishing, target, bodyOf(request), { keepOnBreak: true });
      const after = sent.upload ?? upload;
      if (after.mediaJson) reply.header('Media-Id', (JSON.parse(after.mediaJson) as { id: string }).id);
      return reply
        .code(204)
        .header('Upload-Offset', String(sent.offset))
        .header('Upload-Expires', httpDate(after.expiresAt))
        .send();
    } finally {
      release();
    }
  };

  read = async (request: FastifyRequest, reply: FastifyReply) => {
    const upload = await this.current(request);
    return reply.code(200).type('application/json; charset=utf-8').send(uploadJson(upload));
  };

  remove = async (request: FastifyRequest, reply: FastifyReply) => {
    checkTusResumable(request.headers);
    const caller = grpcCaller(this.principalOf(request));
    await this.publishing.deleteUpload({ caller, uploadId: uploadIdOf(request) });
    return reply.code(204).send();
  };

  /**
   * The upload the path names, in the caller's scope (another's is 404). Asking may complete an
   * upload whose last part was stored but not yet made into media, hence the long deadline.
   */
  private async current(request: FastifyRequest): Promise<MediaUpload> {
    const { upload } = await this.publishing.getUpload(
      { caller: grpcCaller(this.principalOf(request)), uploadId: uploadIdOf(request) },
      { deadlineMs: COMPLETING_DEADLINE_MS },
    );
    return present(upload);
  }

  /** The caller, held to this door's matrix row (an embed session at the API's door is 403). */
  private principalOf(request: FastifyRequest): Principal {
    const principal = request.principal;
    if (!principal) throw errors.unauthorized();
    enforcePermission(this.door.permission, principal, undefined);
    return principal;
  }
}

/** The upload as JSON: how far it got, and its media once made. */
function uploadJson(upload: MediaUpload): string {
  const media = upload.mediaJson ? `,"media":${upload.mediaJson}` : ',"media":null';
  const view = {
    id: upload.id,
    workspace: upload.workspaceId,
    offset: Number(upload.offset),
    length: upload.length === undefined ? null : Number(upload.length),
    expires_at: upload.expiresAt,
  };
  return `${JSON.stringify(view).slice(0, -1)}${media}}`;
}

function uploadIdOf(request: FastifyRequest): string {
  const { id } = request.params as { id: string };
  if (!isId('upload', id)) throw errors.notFound('upload');
  return id;
}

function present(upload: MediaUpload | undefined): MediaUpload {
  if (!upload) throw new ServiceError('internal_error', 'publishing answered no upload');
  return upload;
}

/** A PATCH's body: the request stream its content-type parser kept, or nothing. */
async function* bodyOf(request: FastifyRequest): AsyncGenerator<Uint8Array> {
  const body = request.body as Readable | undefined;
  if (body) yield* body;
}

function singleHeader(value: string | string[] | undefined): string | undefined {
  return Array.isArray(value) ? value.join(',') : value;
}
