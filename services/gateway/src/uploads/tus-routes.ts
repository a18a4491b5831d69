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
import { COMPLETING_DEADLINE_MS, sendParts } from './upload-parts.ts';

export interface TusLimits {
  /** The largest file (MEDIA_VIDEO_MAX_BYTES): Tus-Max-Size. */
  videoMaxBytes: number;
  /** PATCHes passing through this process at once, per partner and in all (429 beyond). */
  perPartner: number;
  total: number;
}

const UPLOADS = '/v1/uploads';
const UPLOAD = '/v1/uploads/:id';

/**
 * Resumable uploads, tus 1.0.0 with creation, termination and expiration: `POST /v1/uploads`
 * (Upload-Length, Upload-Metadata with `workspace` and an optional `filename`) creates one in
 * publishing; `HEAD` says how far it got; `PATCH` appends a body at its offset, streaming it to
 * publishing in 1 MiB parts (a broken PATCH keeps every part that arrived, and the client resumes
 * from the offset HEAD gives); the PATCH that brings the last byte makes the media (its id in
 * `Media-Id`); `GET` answers the upload as JSON with the media once made; `DELETE` ends it.
 * A route module rather than operations: the bodies are raw streams and HEAD and OPTIONS are
 * part of the protocol. Authenticated like every /v1 route (not OPTIONS, which tus clients ask
 * before anything); an upload belongs to its partner and workspace as media do (another's is 404).
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
    const capabilities = async (_request: FastifyRequest, reply: FastifyReply) =>
      reply
        .code(204)
        .header('Tus-Version', TUS_VERSION)
        .header('Tus-Extension', TUS_EXTENSIONS)
        .header('Tus-Max-Size', String(limits.videoMaxBytes))
        .send();
    scope.options(UPLOADS, capabilities);
    scope.options(UPLOAD, capabilities);
    scope.post(UPLOADS, (request, reply) => create(publishing, limits, request, reply));
    scope.head(UPLOAD, (request, reply) => head(publishing, request, reply));
    scope.patch(UPLOAD, { preParsing: async (request) => checkPatch(request) }, (request, reply) =>
      patch(publishing, slots, request, reply),
    );
    scope.get(UPLOAD, { exposeHeadRoute: false }, (request, reply) => read(publishing, request, reply));
    scope.delete(UPLOAD, (request, reply) => remove(publishing, request, reply));
  };
}

async function create(
  publishing: PublishingClient,
  limits: TusLimits,
  request: FastifyRequest,
  reply: FastifyReply,
) {
  const principal = principalOf(request);
  checkTusResumable(request.headers);
  if (request.headers['upload-defer-length'] !== undefined)
    throw errors.validation(
      'Upload-Length',
      'Upload-Length is required (a deferred length is not supported)',
    );
  const length = byteCount(request.headers, 'Upload-Length');
  if (length > limits.videoMaxBytes)
    throw new TusRefusal(413, 'Upload-Length', errors.fileTooLarge('file', limits.videoMaxBytes).message);
  const metadata = parseMetadata(singleHeader(request.headers['upload-metadata']));
  const workspaceId = metadata.workspace ?? '';
  if (!workspaceId) throw errors.validation('Upload-Metadata', 'Upload-Metadata must name the workspace');
  enforcePermission('objects', principal, undefined, workspaceId);
  const { upload } = await publishing.startUpload({
    caller: grpcCaller(principal),
    workspaceId,
    length: BigInt(length),
    filename: metadata.filename ?? '',
  });
  const started = present(upload);
  return reply
    .code(201)
    .header('Location', `${UPLOADS}/${started.id}`)
    .header('Upload-Offset', '0')
    .header('Upload-Expires', httpDate(started.expiresAt))
    .type('application/json; charset=utf-8')
    .send(uploadJson(started));
}

async function head(publishing: PublishingClient, request: FastifyRequest, reply: FastifyReply) {
  checkTusResumable(request.headers);
  const upload = await current(publishing, request);
  reply.header('Upload-Offset', String(upload.offset)).header('Cache-Control', 'no-store');
  if (upload.length !== undefined) reply.header('Upload-Length', String(upload.length));
  return reply.header('Upload-Expires', httpDate(upload.expiresAt)).code(200).send();
}

/** Tus's checks of a PATCH, made before its body is read. */
function checkPatch(request: FastifyRequest): void {
  checkTusResumable(request.headers);
  checkPatchType(request.headers);
}

async function patch(
  publishing: PublishingClient,
  slots: ConcurrencySlots,
  request: FastifyRequest,
  reply: FastifyReply,
) {
  const offset = byteCount(request.headers, 'Upload-Offset');
  const upload = await current(publishing, request);
  if (Number(upload.offset) !== offset)
    throw errors.conflict(`Upload-Offset ${offset} does not match the upload's offset ${upload.offset}`);
  const length = upload.length === undefined ? null : Number(upload.length);
  const sending = Number(request.headers['content-length'] ?? 0);
  if (length !== null && offset + sending > length)
    throw errors.validation('Content-Length', `the part would end past Upload-Length (${length} bytes)`);
  const release = slots.claim(principalOf(request).partnerId);
  try {
    const target = { caller: grpcCaller(principalOf(request)), uploadId: upload.id, offset, length };
    const sent = await sendParts(publishing, target, bodyOf(request), { keepOnBreak: true });
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
}

async function read(publishing: PublishingClient, request: FastifyRequest, reply: FastifyReply) {
  const upload = await current(publishing, request);
  return reply.code(200).type('application/json; charset=utf-8').send(uploadJson(upload));
}

async function remove(publishing: PublishingClient, request: FastifyRequest, reply: FastifyReply) {
  checkTusResumable(request.headers);
  const id = uploadIdOf(request);
  await publishing.deleteUpload({ caller: grpcCaller(principalOf(request)), uploadId: id });
  return reply.code(204).send();
}

/**
 * The upload the path names, in the caller's scope (another's is 404). Asking may complete an
 * upload whose last part was stored but not yet made into media, hence the long deadline.
 */
async function current(publishing: PublishingClient, request: FastifyRequest): Promise<MediaUpload> {
  const { upload } = await publishing.getUpload(
    { caller: grpcCaller(principalOf(request)), uploadId: uploadIdOf(request) },
    { deadlineMs: COMPLETING_DEADLINE_MS },
  );
  return present(upload);
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

function principalOf(request: FastifyRequest): Principal {
  const principal = request.principal;
  if (!principal) throw errors.unauthorized();
  enforcePermission('objects', principal, undefined);
  return principal;
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
