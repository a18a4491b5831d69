import { invalidParam } from './graph-errors.ts';
import { hostFile } from './hosted-files.ts';
import { fetchMedia } from './media-fetch.ts';
import type { AttachmentType, MessageAttachment } from './store.ts';
import type { World } from './world.ts';

/**
 * Files in DMs (facts §4.2, §4.3, §5.5, §5.7). Inbound files are hosted by Meta, so the sandbox
 * takes the URL it is given as is; files the business sends through the Send API are downloaded
 * the way Meta downloads them, and refused as Meta refuses them.
 */
export const ATTACHMENT_TYPES = ['image', 'video', 'audio', 'file'] as const;

const MIME_BY_EXTENSION: Record<string, string> = {
  jpg: 'image/jpeg',
  jpeg: 'image/jpeg',
  png: 'image/png',
  gif: 'image/gif',
  webp: 'image/webp',
  mp4: 'video/mp4',
  mov: 'video/quicktime',
  mp3: 'audio/mpeg',
  m4a: 'audio/mp4',
  aac: 'audio/aac',
  wav: 'audio/wav',
  pdf: 'application/pdf',
};
const DEFAULT_MIME: Record<AttachmentType, string> = {
  image: 'image/jpeg',
  video: 'video/mp4',
  audio: 'audio/mpeg',
  file: 'application/octet-stream',
};
/** The size of an inbound image or video when the control call does not say. */
const DEFAULT_SIDE = 1080;
/** IG images at most 8 MB; video, audio and files at most 25 MB (facts §4.3). */
const SEND_LIMIT_BYTES: Record<AttachmentType, number> = {
  image: 8 * 1024 * 1024,
  video: 25 * 1024 * 1024,
  audio: 25 * 1024 * 1024,
  file: 25 * 1024 * 1024,
};

function fileName(url: string, type: AttachmentType): string {
  const last = new URL(url).pathname.split('/').at(-1) ?? '';
  return last ? decodeURIComponent(last) : type;
}

function mimeOf(url: string, type: AttachmentType): string {
  const extension = fileName(url, type).split('.').at(-1)?.toLowerCase() ?? '';
  return MIME_BY_EXTENSION[extension] ?? DEFAULT_MIME[type];
}

export interface InboundAttachmentInput {
  type: AttachmentType;
  url: string;
  mime_type?: string | undefined;
  name?: string | undefined;
  width?: number | undefined;
  height?: number | undefined;
}

/** A file a person sends (control API): kept as given, the rest filled in from the URL. */
export function inboundAttachment(world: World, input: InboundAttachmentInput): MessageAttachment {
  const visual = input.type === 'image' || input.type === 'video';
  return {
    id: world.ids.attachment(),
    type: input.type,
    url: input.url,
    mimeType: input.mime_type ?? mimeOf(input.url, input.type),
    name: input.name ?? fileName(input.url, input.type),
    width: input.width ?? (visual ? DEFAULT_SIDE : 0),
    height: input.height ?? (visual ? DEFAULT_SIDE : 0),
  };
}

/** The webhook form: `{type, payload:{url}}`. */
export function webhookAttachment(a: MessageAttachment) {
  return { type: a.type, payload: { url: a.url } };
}

/** The form of `GET /{message-id}?fields=attachments`: `image_data`, `video_data` or `file_url`. */
export function graphAttachment(a: MessageAttachment) {
  const base = { id: a.id, mime_type: a.mimeType, name: a.name };
  const data = { url: a.url, preview_url: a.url, width: a.width, height: a.height };
  if (a.type === 'image') return { ...base, image_data: data };
  if (a.type === 'video') return { ...base, video_data: data };
  return { ...base, file_url: a.url };
}

/**
 * `message.attachment` of the Send API: Meta downloads the URL. Unreachable → 100/2018008, an
 * `image` that is not one → 100/2018047, over the size limit → 100/2018109 (facts §4.6). The file
 * is then served from the network's own host (see hosted-files.ts): that is the URL the message,
 * its echo and `GET /{message-id}` carry.
 */
export async function fetchSendAttachment(
  world: World,
  type: AttachmentType,
  url: string,
): Promise<MessageAttachment> {
  const media = await fetchMedia(url, world.config.fetchTimeoutMs);
  if (!media.ok)
    throw invalidParam(`(#100) Failed to fetch the file from the url (${media.reason})`, 2018008);
  if (type === 'image' && media.format === null)
    throw invalidParam('(#100) Upload attachment failure: the file is not an image', 2018047);
  if (media.bytes > SEND_LIMIT_BYTES[type])
    throw invalidParam('(#100) Attachment size exceeds allowable limit', 2018109);
  const declared = media.contentType.split(';')[0]?.trim() ?? '';
  const id = world.ids.attachment();
  const mimeType = media.format ? `image/${media.format}` : declared || mimeOf(url, type);
  const name = fileName(url, type);
  return {
    id,
    type,
    url: hostFile(world, { id, name, mimeType, bytes: media.data }),
    sourceUrl: url,
    mimeType,
    name,
    width: media.width,
    height: media.height,
  };
}
