import { mediaView } from '@svc/contracts/public';
import { errors } from '@svc/errors';
import { z } from 'zod';
import { grpcCaller } from '../auth/principal.ts';
import type { PublishingClient } from '../clients.ts';
import { jsonText, pagedJsonText } from '../http/json-text.ts';
import { idField, paged, pagination, pathId } from '../http/schemas.ts';
import { FormUploads, type UploadLimits } from '../uploads/form-upload.ts';
import { type AnyOperation, defineOperation } from './operation.ts';

/** The defaults of MEDIA_MAX_BYTES and MEDIA_VIDEO_MAX_BYTES (gateway and publishing alike). */
const DEFAULT_MEDIA_MAX_BYTES = 8 * 1024 * 1024;
const DEFAULT_VIDEO_MAX_BYTES = 300 * 1024 * 1024;
/** Fetching a video by URL takes a while: publishing allows the transfer 2 minutes, then reads it. */
const BY_URL_DEADLINE_MS = 180_000;

const mediaParams = z.strictObject({ id: pathId('media', 'media') });
const workspaceId = idField('workspace', 'workspace');

const mediaBody = z.strictObject({
  workspace: workspaceId,
  url: z
    .string()
    .max(2048)
    .optional()
    .describe('an http(s) URL to fetch the image or video from; failures to fetch answer 502 network_error'),
});

const DEFAULT_UPLOAD_LIMITS: UploadLimits = {
  maxBytes: DEFAULT_MEDIA_MAX_BYTES,
  videoMaxBytes: DEFAULT_VIDEO_MAX_BYTES,
  perPartner: 4,
  total: 16,
};

export function mediaOperations(
  publishing: PublishingClient,
  limits = DEFAULT_UPLOAD_LIMITS,
): AnyOperation[] {
  const { maxBytes, videoMaxBytes } = limits;
  const form = new FormUploads(publishing, limits);
  return [
    defineOperation({
      method: 'POST',
      url: '/v1/media',
      summary:
        "Upload an image or a video (multipart/form-data with the field `workspace`, then `file`) or fetch it from a URL (JSON `{ workspace, url }`). JPEG, PNG and WebP images and MP4 and MOV videos are accepted; the type, dimensions and a video's codecs, duration and frame rate are read from the bytes. Large videos upload better in resumable parts (tus, /v1/uploads).",
      permission: 'objects',
      body: mediaBody,
      workspaceIn: 'body',
      formBody: z.object({
        workspace: workspaceId,
        file: z
          .file()
          .describe(`the image (at most ${maxBytes} bytes) or video (at most ${videoMaxBytes} bytes)`),
      }),
      scope: form.scope,
      fingerprint: (request) => form.received(request)?.sha256,
      status: 201,
      response: mediaView,
      widget: { url: '/v1/embed/media', permission: 'embedPublish' },
      tools: [
        {
          // An agent has no file to upload: the JSON form, by URL.
          name: 'create_media_from_url',
          title: 'Add an image from a URL',
          description:
            "Fetch a JPEG, PNG or WebP image, or an MP4 or MOV video, from an http(s) URL into this workspace's media library; answers the media record (id, kind, mime, width, height, duration_ms) to use in create_post.",
          require: ['url'],
        },
      ],
      async run({ principal, body, http }) {
        if (http?.request.isMultipart()) return jsonText(await form.complete(http.request));
        if (!body.url)
          throw errors.validation(
            'url',
            'url is required (or upload the file as multipart/form-data with the fields workspace and file)',
          );
        const { mediaJson } = await publishing.createMedia(
          {
            caller: grpcCaller(principal),
            workspaceId: body.workspace,
            data: new Uint8Array(),
            url: body.url,
          },
          { deadlineMs: BY_URL_DEADLINE_MS },
        );
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
