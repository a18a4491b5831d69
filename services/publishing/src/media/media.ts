import { createHash } from 'node:crypto';
import type { Media as MediaMessage } from '@svc/contracts';
import { type Caller, found, pageWindow, visibleTo } from '@svc/db';
import { errors } from '@svc/errors';
import { isId, newId } from '@svc/ids';
import type { PublishingContext } from '../context.ts';
import type { Db } from '../db.ts';
import type { Media } from '../generated/prisma/client.ts';
import { detectMedia } from './detect.ts';
import { fetchMediaUrl } from './fetch-url.ts';
import { KeptFiles } from './kept-files.ts';
import { MEDIA_VARIANTS, type MediaVariant, verifyMediaToken } from './signed-url.ts';

export type MediaInit = Omit<MediaMessage, '$typeName' | '$unknown'>;

/** The record as the gRPC contract (and through it the public API and post media) shows it. */
export function toMediaMessage(row: Media): MediaInit {
  return {
    id: row.id,
    workspaceId: row.workspaceId,
    kind: row.kind,
    mime: row.mime,
    width: row.width,
    height: row.height,
    size: BigInt(row.size),
    createdAt: row.createdAt.toISOString(),
  };
}

/** Where a variant of a media lives in storage: the original under its key, others beside it. */
export function variantKey(media: Pick<Media, 'storageKey'>, variant: MediaVariant): string {
  return variant === 'original' ? media.storageKey : `${media.storageKey}.${variant}`;
}

export interface CreateMediaInput {
  workspaceId: string;
  /** The uploaded bytes (empty when fetching by URL). */
  data: Uint8Array;
  url: string;
}

/**
 * Stores an upload or a file fetched by URL: the size limit first, then the real type and
 * dimensions from the bytes; the file is written before the row, and removed if the row fails.
 */
export async function createMedia(
  ctx: PublishingContext,
  caller: Caller,
  input: CreateMediaInput,
): Promise<Media> {
  const { workspaceId } = input;
  if (!workspaceId) throw errors.validation('workspace', 'workspace is required');
  if (!isId('workspace', workspaceId)) throw errors.validation('workspace', 'not a valid workspace id');
  if (caller.workspaceId && caller.workspaceId !== workspaceId)
    throw errors.forbidden('this workspace key can only reach its own workspace');
  const hasData = input.data.length > 0;
  if (hasData && input.url) throw errors.validation('url', 'send either a file or a url, not both');
  if (!hasData && !input.url)
    throw errors.validation('file', 'a file (multipart field "file") or a url is required');
  // The workspace must be the caller's: another partner's (or a deleted one) is not found.
  await ctx.identity.getWorkspace({ partnerId: caller.partnerId, workspaceId });

  const field = hasData ? 'file' : 'url';
  const max = ctx.config.MEDIA_MAX_BYTES;
  const bytes = hasData
    ? Buffer.from(input.data.buffer, input.data.byteOffset, input.data.byteLength)
    : await fetchMediaUrl(input.url, {
        allowPrivateNetworks: ctx.config.ALLOW_PRIVATE_NETWORKS,
        timeoutMs: ctx.config.MEDIA_FETCH_TIMEOUT_MS,
        maxBytes: max,
      });
  if (bytes.length > max) throw errors.fileTooLarge(field, max);
  const detected = detectMedia(bytes);
  if (!detected.ok)
    throw errors.validation(
      field,
      field === 'url' ? detected.reason.replace(/^the file/, 'the file at url') : detected.reason,
    );

  const id = newId('media', ctx.now().getTime());
  await ctx.storage.put(id, bytes);
  try {
    return await ctx.db.media.create({
      data: {
        id,
        partnerId: caller.partnerId,
        workspaceId,
        kind: detected.kind,
        mime: detected.mime,
        width: detected.width,
        height: detected.height,
        size: bytes.length,
        storageKey: id,
        sha256: createHash('sha256').update(bytes).digest('hex'),
        createdAt: ctx.now(),
      },
    });
  } catch (error) {
    await ctx.storage.delete(id).catch(() => {});
    throw error;
  }
}

/** A media of the caller's scope; another partner's or workspace's is not_found. */
export async function getMedia(db: Db, caller: Caller, id: string): Promise<Media> {
  return found(await db.media.findFirst({ where: { id, ...visibleTo(caller) } }), 'media');
}

export async function listMedia(
  ctx: PublishingContext,
  caller: Caller,
  query: { workspaceId: string; page: number; limit: number },
): Promise<{ media: Media[]; total: number }> {
  if (!query.workspaceId) throw errors.validation('workspace', 'workspace is required');
  if (caller.workspaceId && caller.workspaceId !== query.workspaceId)
    throw errors.forbidden('this workspace key can only reach its own workspace');
  await ctx.identity.getWorkspace({ partnerId: caller.partnerId, workspaceId: query.workspaceId });
  const where = { ...visibleTo(caller), workspaceId: query.workspaceId };
  const [media, total] = await Promise.all([
    ctx.db.media.findMany({ where, orderBy: { id: 'asc' }, ...pageWindow(query.page, query.limit) }),
    ctx.db.media.count({ where }),
  ]);
  return { media, total };
}

/**
 * Removes a media record and its files. Refused (409) while a post that is not published yet
 * (draft, scheduled, publishing, partial or failed: all may still be sent) lists it. The media
 * row is locked while checking, so a post creation that locks the media it references
 * (`FOR SHARE`) cannot slip in between the check and the delete.
 */
export async function deleteMedia(ctx: PublishingContext, caller: Caller, id: string): Promise<void> {
  const media = await getMedia(ctx.db, caller, id);
  await ctx.db.$transaction(async (tx) => {
    await tx.$queryRaw`SELECT id FROM media WHERE id = ${id} FOR UPDATE`;
    const user = await tx.post.findFirst({
      where: { workspaceId: media.workspaceId, mediaIds: { has: id }, status: { not: 'published' } },
      select: { id: true, status: true },
      orderBy: { createdAt: 'asc' },
    });
    if (user)
      throw errors.conflict(
        `media ${id} is used by post ${user.id} (${user.status}), which is not published yet; remove it from the post first`,
      );
    await tx.media.deleteMany({ where: { id } });
  });
  knownMedia.delete(id);
  // The record is gone either way; a file that could not be removed is only disk space.
  await removeFiles(ctx, [media]).catch((error: unknown) =>
    ctx.logger.warn({ err: error, media: id }, 'could not remove a deleted media file'),
  );
}

/** `workspace.deleted`: every media record and file of the workspace. Idempotent (safe to redeliver). */
export async function purgeWorkspaceMedia(ctx: PublishingContext, workspaceId: string): Promise<number> {
  let removed = 0;
  for (;;) {
    const batch = await ctx.db.media.findMany({ where: { workspaceId }, orderBy: { id: 'asc' }, take: 200 });
    if (batch.length === 0) return removed;
    // Files first: a crash in between leaves rows whose files are gone, which the redelivery removes.
    await removeFiles(ctx, batch);
    const { count } = await ctx.db.media.deleteMany({ where: { id: { in: batch.map((m) => m.id) } } });
    removed += count;
  }
}

/** What post checks and signed-URL reads need of a media row; none of it ever changes. */
export interface KnownMedia {
  id: string;
  partnerId: string;
  workspaceId: string;
  kind: string;
  mime: string;
  width: number;
  height: number;
  storageKey: string;
}

const KNOWN_MEDIA = {
  name: 'publishing_known_media',
  text: `SELECT id, partner_id AS "partnerId", workspace_id AS "workspaceId", kind, mime, width, height,
                storage_key AS "storageKey"
           FROM media WHERE id = ANY($1)`,
};

/**
 * Media rows as post checks and signed-URL reads need them, kept per process for a minute: a post
 * reads its media when it is created, and the networks fetch each file once per target, while no
 * field read here ever changes. A deleted media may stay known for that minute, and neither use
 * trusts it alone: a post's insert locks its media and writes nothing when one is gone, and a
 * deleted media's file is removed, so its signed URL finds nothing.
 */
const knownMedia = new Map<string, { media: KnownMedia; at: number }>();
const KNOWN_MEDIA_MAX_AGE_MS = 60_000;
const KNOWN_MEDIA_MAX_ENTRIES = 10_000;

/** The media of these ids that exist, by id. */
export async function readKnownMedia(
  ctx: PublishingContext,
  ids: readonly string[],
): Promise<Map<string, KnownMedia>> {
  const result = new Map<string, KnownMedia>();
  const now = Date.now();
  const missing: string[] = [];
  for (const id of ids) {
    const kept = knownMedia.get(id);
    if (kept && now - kept.at < KNOWN_MEDIA_MAX_AGE_MS) result.set(id, kept.media);
    else missing.push(id);
  }
  if (missing.length === 0) return result;
  const { rows } = await ctx.pool.query<KnownMedia>({ ...KNOWN_MEDIA, values: [missing] });
  if (knownMedia.size + rows.length > KNOWN_MEDIA_MAX_ENTRIES) knownMedia.clear();
  for (const media of rows) {
    knownMedia.set(media.id, { media, at: now });
    result.set(media.id, media);
  }
  return result;
}

/** 64 MiB of recently read files per process, for a minute (see KeptFiles). */
const keptFiles = new KeptFiles(64 * 1024 * 1024, 60_000);

/** The bytes behind a signed URL; a forged, expired or dangling token is not_found. */
export async function readMediaFile(
  ctx: PublishingContext,
  token: string,
): Promise<{ mime: string; data: Buffer; expiresAt: Date }> {
  const verified = verifyMediaToken(ctx.config, token, ctx.now());
  if (!verified) throw errors.notFound('media file');
  const media = (await readKnownMedia(ctx, [verified.mediaId])).get(verified.mediaId);
  if (!media) throw errors.notFound('media file');
  const key = variantKey(media, verified.variant);
  const data = keptFiles.get(key) ?? (await readAndKeep(ctx, key));
  if (!data) throw errors.notFound('media file');
  return {
    mime: verified.variant === 'jpeg' ? 'image/jpeg' : media.mime,
    data,
    expiresAt: verified.expiresAt,
  };
}

/** A file from the volume, kept (a hit does not renew its minute: see KeptFiles). */
async function readAndKeep(ctx: PublishingContext, key: string): Promise<Buffer | null> {
  const data = await ctx.storage.get(key);
  if (data) keptFiles.set(key, data);
  return data;
}

async function removeFiles(ctx: PublishingContext, media: Pick<Media, 'storageKey'>[]): Promise<void> {
  const keys = media.flatMap((m) => MEDIA_VARIANTS.map((variant) => variantKey(m, variant)));
  for (const key of keys) keptFiles.delete(key);
  await Promise.all(keys.map((key) => ctx.storage.delete(key)));
}
