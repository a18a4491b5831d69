import { mediaView } from '@svc/contracts/public';
import { TUS_EXTENSIONS, TUS_VERSION } from '../uploads/tus-protocol.ts';
import type { SchemaComponents } from './openapi-schemas.ts';

/**
 * Resumable uploads in the OpenAPI document: the tus 1.0.0 protocol (core, creation, termination,
 * expiration) at `/v1/uploads`, served by a route module rather than operations (raw bodies,
 * HEAD), described here so partners and tools find it beside `/v1/media`.
 */
export const UPLOADS_TAG = {
  name: 'Uploads',
  description: `Resumable uploads of large files (videos) with tus ${TUS_VERSION} (${TUS_EXTENSIONS}): any tus client works. The upload that brings the last byte becomes a media item.`,
};

const ref = (kind: string, name: string) => ({ $ref: `#/components/${kind}/${name}` });
const header = (name: string, description: string, required = true) => ({
  name,
  in: 'header',
  required,
  description,
  schema: { type: 'string' },
});
const tusResumable = header('Tus-Resumable', `the protocol version: ${TUS_VERSION}`);
const uploadId = {
  name: 'id',
  in: 'path',
  required: true,
  description: 'upload id (upl_…)',
  schema: { type: 'string' },
};
const refusals = {
  '400': ref('responses', 'BadRequest'),
  '412': { description: 'validation_error: `Tus-Resumable` is missing or not 1.0.0 (tus prescribes 412)' },
  '401': ref('responses', 'Unauthorized'),
  '403': ref('responses', 'Forbidden'),
  '429': ref('responses', 'RateLimited'),
};
const ofUpload = { ...refusals, '404': ref('responses', 'NotFound') };

export function uploadPaths(schemas: SchemaComponents): Record<string, Record<string, unknown>> {
  const upload = {
    type: 'object',
    required: ['id', 'workspace', 'offset', 'length', 'expires_at', 'media'],
    properties: {
      id: { type: 'string' },
      workspace: { type: 'string' },
      offset: { type: 'integer', description: 'bytes received so far' },
      length: { type: ['integer', 'null'], description: 'the whole file, in bytes' },
      expires_at: { type: 'string', format: 'date-time' },
      media: {
        oneOf: [schemas.convert(mediaView, 'output'), { type: 'null' }],
        description: 'once complete',
      },
    },
  };
  const common = [tusResumable, ref('parameters', 'RequestId')];
  return {
    '/v1/uploads': {
      post: {
        operationId: 'createUpload',
        tags: [UPLOADS_TAG.name],
        summary: 'Start a resumable upload (tus creation)',
        // No Idempotency-Key: a creation whose answer was lost leaves an empty upload that expires.
        parameters: [
          ...common,
          header('Upload-Length', 'the size of the whole file, in bytes (at most Tus-Max-Size)'),
          header(
            'Upload-Metadata',
            'tus metadata: `workspace <base64 ws_…>` and optionally `filename <base64>`',
          ),
        ],
        responses: {
          '201': { description: 'created; `Location` is the upload URL, `Upload-Expires` when it lapses' },
          '413': { description: 'the file is over the video size limit (MEDIA_VIDEO_MAX_BYTES)' },
          ...refusals,
        },
      },
    },
    '/v1/uploads/{id}': {
      head: {
        operationId: 'getUploadOffset',
        tags: [UPLOADS_TAG.name],
        summary: 'How much of the file has arrived (`Upload-Offset`): where to resume',
        parameters: [uploadId, ...common],
        responses: { '200': { description: '`Upload-Offset` and `Upload-Length`' }, ...ofUpload },
      },
      patch: {
        operationId: 'appendUpload',
        tags: [UPLOADS_TAG.name],
        summary: 'Send bytes from `Upload-Offset`; the last ones make the media (`Media-Id`)',
        parameters: [
          uploadId,
          ...common,
          header('Upload-Offset', 'where these bytes start: the offset HEAD gave'),
        ],
        requestBody: {
          required: true,
          content: { 'application/offset+octet-stream': { schema: { type: 'string', format: 'binary' } } },
        },
        responses: {
          '204': { description: 'appended; `Upload-Offset` is the new offset, `Media-Id` once complete' },
          '409': {
            description: 'conflict: the offset is not where the upload stands, or another PATCH is running',
          },
          '415': { description: 'the body is not application/offset+octet-stream' },
          ...ofUpload,
        },
      },
      get: {
        operationId: 'getUpload',
        tags: [UPLOADS_TAG.name],
        summary: 'An upload as JSON, with its media once complete',
        parameters: [uploadId, ref('parameters', 'RequestId')],
        responses: {
          '200': { description: 'the upload', content: { 'application/json': { schema: upload } } },
          ...ofUpload,
        },
      },
      delete: {
        operationId: 'deleteUpload',
        tags: [UPLOADS_TAG.name],
        summary: 'End an unfinished upload and drop its bytes (tus termination)',
        parameters: [uploadId, ...common],
        responses: { '204': { description: 'ended' }, ...ofUpload },
      },
    },
  };
}
