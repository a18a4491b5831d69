import multipart from '@fastify/multipart';
import { mediaView } from '@svc/contracts/public';
import { sha256Hex } from '@svc/crypto';
import { errors, ServiceError } from '@svc/errors';
import { ConcurrencySlots } from '@svc/ops';
import type { FastifyInstance, FastifyRequest } from 'fastify';
import { z } from 'zod';
import { grpcCaller } from '../auth/principal.ts';
import type { PublishingClient } from '../clients.ts';
import { jsonText, pagedJsonText } from '../http/json-text.ts';
import { idField, paged, pagination, pathId } from '../http/schemas.ts';
import { type AnyOperation, defineOperation } from './operation.ts';

/** The default of MEDIA_MAX_BYTES (gateway and publishing alike). */
const DEFAULT_MEDIA_MAX_BYTES = 8 * 1024 * 1024;

const mediaParams = z.strictObject({ id: pathId('media', 'media') });
const workspaceId = idField('workspace', 'workspace');

const mediaBody = z.strictObject({
  workspace: workspaceId,
  url: z
    .string()
    .max(2048)
    .optional()
    .describe('an http(s) URL to fetch the image from; failures to fetch answer 502 network_error'),
});

/** The uploaded file of a multipart request, kept beside the request until its handler runs. */
const uploads = new WeakMap<FastifyRequest, Buffer>();

/** What an upload may cost the gateway: its size, and how many are read into memory at once. */
interface UploadLimits {
  maxBytes: number;
  perPartner: number;
  total: number;
}

const DEFAULT_UPLOAD_LIMITS: UploadLimits = { maxBytes: DEFAULT_MEDIA_MAX_BYTES, perPartner: 4, total: 16 };

export function mediaOperations(
  publishing: PublishingClient,
  limits = DEFAULT_UPLOAD_LIMITS,
): AnyOperation[] {
  const { maxBytes } = limits;
  return [
    defineOperation({
      method: 'POST',
      url: '/v1/media',
      summary:
        'Upload an image (multipart/form-data with fields `file` and `workspace`) or fetch it from a URL (JSON `{ workspace, url }`). JPEG, PNG and WebP are accepted; the type and dimensions are read from the bytes.',
      permission: 'objects',
      body: mediaBody,
      workspaceIn: 'body',
      formBody: z.object({
        workspace: workspaceId,
        file: z.file().describe(`the image; at most ${maxBytes} bytes`),
      }),
      scope: multipartUploads(limits),
      fingerprint: (request) => {
        const file = uploads.get(request);
        return file ? sha256Hex(file) : undefined;
      },
      status: 201,
      response: mediaView,
      widget: { url: '/v1/embed/media', permission: 'embedPublish' },
      tools: [
        {
          // An agent has no file to upload: the JSON form, by URL.
          name: 'create_media_from_url',
          title: 'Add an image from a URL',
          description:
            "Fetch a JPEG, PNG or WebP image from an http(s) URL into this workspace's media library; answers the media record (id, mime, width, height) to use in create_post.",
          require: ['url'],
        },
      ],
      async run({ principal, body, http }) {
        const file = http && uploads.get(http.request);
        if (!file && !body.url) {
          throw http?.request.isMultipart()
            ? errors.validation('file', 'the multipart field "file" is required')
            : errors.validation(
                'url',
                'url is required (or upload the file as multipart/form-data with the fields file and workspace)',
              );
        }
        const { mediaJson } = await publishing.createMedia({
          caller: grpcCaller(principal),
          workspaceId: body.workspace,
          data: file ?? new Uint8Array(),
          url: body.url ?? '',
        });
        return jsonText(mediaJson);
      },
    }),
    defineOperation({
      method: 'GET',
      url: '/v1/media',
      summary: 'List the media of a workspace, oldest first',
      permission: 'objects',
      query: z.strictObject({ ...pagination, workspace: workspaceId }),
      workspaceIn: 'query',
      status: 200,
      response: paged(mediaView),
      async run({ principal, query }) {
        const { mediaJson, total } = await publishing.listMedia({
          caller: grpcCaller(principal),
          workspaceId: query.workspace,
          page: query.page,
          limit: query.limit,
        });
        return pagedJsonText(mediaJson, query.page, query.limit, total);
      },
    }),
    defineOperation({
      method: 'GET',
      url: '/v1/media/:id',
      summary: 'Read a media record',
      permission: 'objects',
      params: mediaParams,
      status: 200,
      response: mediaView,
      async run({ principal, params }) {
        const { mediaJson } = await publishing.getMedia({
          caller: grpcCaller(principal),
          mediaId: params.id,
        });
        return jsonText(mediaJson);
      },
    }),
    defineOperation({
      method: 'DELETE',
      url: '/v1/media/:id',
      summary:
        'Delete a media record and its file; refused with 409 conflict while a post that is not published yet uses it',
      permission: 'objects',
      params: mediaParams,
      status: 204,
      async run({ principal, params }) {
        await publishing.deleteMedia({ caller: grpcCaller(principal), mediaId: params.id });
      },
    }),
  ];
}

/**
 * Multipart parsing for the upload route only. The form is read in a preValidation hook: the
 * `workspace` field becomes the body (validated like the JSON one), the `file` part is buffered
 * up to the limit (one byte more is a 400 naming `file` and the limit) and handed to the route.
 * Any other part, a second file or a malformed form is a 400 as well, never a 5xx. Each upload
 * holds a slot until it is answered (at most `perPartner` per partner and `total` per gateway
 * process: 429 beyond), so the files held in memory at once stay bounded whatever one partner sends.
 */
function multipartUploads({ maxBytes, perPartner, total }: UploadLimits) {
  const slots = new ConcurrencySlots({
    what: 'media uploads',
    perKey: perPartner,
    total,
    retryAfterSeconds: 1,
  });
  const held = new WeakMap<FastifyRequest, () => void>();
  const release = async (request: FastifyRequest) => held.get(request)?.();
  return async (scope: FastifyInstance) => {
    scope.addHook('onResponse', release);
    scope.addHook('onRequestAbort', release);
    await scope.register(multipart, {
      limits: {
        fileSize: maxBytes,
        files: 1,
        fields: 2,
        parts: 3,
        fieldSize: 1024,
        fieldNameSize: 100,
        headerPairs: 20,
      },
      throwFileSizeLimit: true,
      // The field name decides, not the client's filename or Content-Type.
      isPartAFile: (name, _contentType, filename) => name === 'file' || filename !== undefined,
    });
    scope.addHook('preValidation', async (request) => {
      if (!request.isMultipart()) return;
      held.set(request, slots.claim(request.principal?.partnerId ?? ''));
      const fields: Record<string, string> = {};
      try {
        for await (const part of request.parts()) {
          if (part.fieldname !== 'file' && part.fieldname !== 'workspace')
            throw errors.validation(
              part.fieldname,
              `unknown field "${part.fieldname}": send the fields file and workspace`,
            );
          if (part.type === 'file') {
            if (part.fieldname !== 'file')
              throw errors.validation(part.fieldname, `${part.fieldname} must be a text field`);
            uploads.set(request, await part.toBuffer());
          } else {
            if (part.fieldname === 'file')
              throw errors.validation('file', 'file must be a file part (with a filename), not a text field');
            if (part.valueTruncated) throw errors.validation(part.fieldname, `${part.fieldname} is too long`);
            fields[part.fieldname] = String(part.value);
          }
        }
      } catch (error) {
        throw formError(error, maxBytes);
      }
      request.body = fields;
    });
  };
}

/** A multipart problem as the 400 the partner can act on. */
function formError(error: unknown, maxBytes: number): ServiceError {
  if (error instanceof ServiceError) return error;
  const code = (error as { code?: string }).code;
  if (code === 'FST_REQ_FILE_TOO_LARGE') return errors.fileTooLarge('file', maxBytes);
  if (code === 'FST_FILES_LIMIT') return errors.validation('file', 'send exactly one file');
  if (code === 'FST_PARTS_LIMIT' || code === 'FST_FIELDS_LIMIT')
    return errors.validation('body', 'too many form fields: send only file and workspace');
  if (code === 'FST_PROTO_VIOLATION') return errors.validation('body', 'forbidden form field name');
  const message = (error as { message?: string }).message ?? 'unreadable';
  return errors.validation('body', `malformed multipart/form-data body: ${message}`);
}
