import { createHash } from 'node:crypto';
import type { MediaView } from '@svc/contracts/public';
import { type Caller, found, pageWindow, transaction, visibleTo } from '@svc/db';
import type { WorkspaceDirectory } from '@svc/directory';
import { errors } from '@svc/errors';
import { isId, newId } from '@svc/ids';
import type { Logger } from '@svc/logging';
import { ConcurrencySlots } from '@svc/ops';
import type pg from 'pg';
import type { PublishingConfig } from '../config.ts';
import type { Db } from '../db.ts';
import type { Media } from '../generated/prisma/client.ts';
import type { PostStore } from '../posts/post-store.ts';
import { detectMedia } from './detect.ts';
import { displayedSize } from './displayed-size.ts';
import { fetchMediaUrl } from './fetch-url.ts';
import { type KnownMedia, KnownMediaRows } from './known-media.ts';
import { type MediaFiles, variantKey } from './media-files.ts';
import { verifyMediaToken } from './signed-url.ts';
import type { StoredFile } from './storage.ts';

type LibraryConfig = Pick<
  PublishingConfig,
  | 'MEDIA_MAX_BYTES'
  | 'ALLOW_PRIVATE_NETWORKS'
  | 'MEDIA_FETCH_TIMEOUT_MS'
  | 'PUBLIC_BASE_URL'
  | 'MEDIA_URL_SECRET'
  | 'MEDIA_URL_TTL_SECONDS'
  | 'MEDIA_MAX_PIXELS'
  | 'MEDIA_UPLOADS_PER_PARTNER'
  | 'MEDIA_UPLOADS_TOTAL'
>;

export interface CreateMediaInput {
  workspaceId: string;
  /** The uploaded bytes (empty when fetching by URL). */
  data: Uint8Array;
  url: string;
}

/** A media record as partners see it (`MediaView`): the only place a media row becomes it. */
export function viewOfMedia(row: Media): MediaView {
  return {
    id: row.id,
    workspace: row.workspaceId,
    kind: row.kind,
    mime: row.mime,
    width: row.width,
    height: row.height,
    size: row.size,
    created: row.createdAt.toISOString(),
  };
}

/**
 * The media library: media records and their files. Uploads and URL fetches are checked (size,
 * real type, dimensions and pixel budget from the bytes) before anything is kept, and only so
 * many run at once (ConcurrencySlots); a media item that a post may still send cannot be deleted; the
 * networks read files through signed URLs.
 */
export class MediaLibrary {
  readonly files: MediaFiles;
  private readonly rows: KnownMediaRows;
  private readonly uploads: ConcurrencySlots;

  constructor(
    private readonly db: Db,
    private readonly pool: pg.Pool,
    private readonly deps: {
      files: MediaFiles;
      workspaces: WorkspaceDirectory;
      posts: PostStore;
      config: LibraryConfig;
      logger: Logger;
      now: () => Date;
    },
  ) {
    this.files = deps.files;
    this.rows = new KnownMediaRows(pool);
    const { MEDIA_UPLOADS_PER_PARTNER: perKey, MEDIA_UPLOADS_TOTAL: total } = deps.config;
    // An upload takes a second or so: by then a slot is likely free again.
    this.uploads = new ConcurrencySlots({ what: 'media uploads', perKey, total, retryAfterSeconds: 1 });
  }

  /** Stores an upload or a file fetched by URL, in one of the partner's upload slots. */
  async create(caller: Caller, input: CreateMediaInput): Promise<Media> {
    checkCreateInput(caller, input);
    return this.uploads.run(caller.partnerId, () => this.store(caller, input));
  }

  /** The file is written before the row, and removed if the row fails. */
  private async store(caller: Caller, input: CreateMediaInput): Promise<Media> {
    // The workspace must be the caller's: another partner's (or a deleted one) is not found.
    await this.deps.workspaces.confirmOwned(caller, input.workspaceId);
    const { bytes, detected } = await this.receive(input);
    const id = newId('media', this.deps.now().getTime());
    await this.files.put(id, bytes);
    try {
      return await this.db.media.create({
        data: {
          id,
          partnerId: caller.partnerId,
          workspaceId: input.workspaceId,
          ...detected,
          size: bytes.length,
          storageKey: id,
          sha256: createHash('sha256').update(bytes).digest('hex'),
          createdAt: this.deps.now(),
        },
      });
    } catch (error) {
      await this.files.remove([{ storageKey: id }]).catch(() => {});
      throw error;
    }
  }

  /**
   * The bytes of an upload or a URL: the size limit first, then the real type and the pixel budget
   * from the headers, and only then the image library (which decodes no more than the budget).
   */
  private async receive(input: CreateMediaInput) {
    const { config } = this.deps;
    const field = input.data.length > 0 ? 'file' : 'url';
    const max = config.MEDIA_MAX_BYTES;
    const bytes =
      field === 'file'
        ? Buffer.from(input.data.buffer, input.data.byteOffset, input.data.byteLength)
        : await fetchMediaUrl(input.url, {
            allowPrivateNetworks: config.ALLOW_PRIVATE_NETWORKS,
            timeoutMs: config.MEDIA_FETCH_TIMEOUT_MS,
            maxBytes: max,
          });
    const what = field === 'file' ? 'file' : 'file at url';
    if (bytes.length > max) throw errors.fileTooLarge(field, max);
    const detected = detectMedia(bytes, config.MEDIA_MAX_PIXELS);
    if (!detected.ok) throw errors.validation(field, detected.reason.replace(/^the file/, `the ${what}`));
    const shown = await displayedSize(this.files.images, bytes);
    if (!shown)
      throw errors.validation(field, `the ${what} cannot be read as an image (truncated or corrupt)`);
    const { kind, mime } = detected;
    return { bytes, detected: { kind, mime, ...shown } };
  }

  /** A media of the caller's scope; another partner's or workspace's is not_found. */
  async get(caller: Caller, id: string): Promise<Media> {
    return found(await this.db.media.findFirst({ where: { id, ...visibleTo(caller) } }), 'media');
  }

  async list(caller: Caller, query: { workspaceId: string; page: number; limit: number }) {
    if (!query.workspaceId) throw errors.validation('workspace', 'workspace is required');
    if (caller.workspaceId && caller.workspaceId !== query.workspaceId)
      throw errors.forbidden('this workspace key can only reach its own workspace');
    await this.deps.workspaces.confirmOwned(caller, query.workspaceId);
    const where = { ...visibleTo(caller), workspaceId: query.workspaceId };
    const [media, total] = await Promise.all([
      this.db.media.findMany({ where, orderBy: { id: 'asc' }, ...pageWindow(query.page, query.limit) }),
      this.db.media.count({ where }),
    ]);
    return { media, total };
  }

  /**
   * Removes a media record and its files. Refused (409) while a post that is not published yet
   * (draft, scheduled, publishing, partial or failed: all may still be sent) lists it. The media
   * row is locked while checking, so a post creation that locks the media it references
   * (`FOR SHARE`) cannot slip in between the check and the delete.
   */
  async delete(caller: Caller, id: string): Promise<void> {
    const media = await this.get(caller, id);
    await transaction(this.pool, async (tx) => {
      await tx.query({ ...LOCK_MEDIA_ROW, values: [id] });
      const user = await this.deps.posts.unpublishedPostWithMedia(tx, media.workspaceId, id);
      if (user)
        throw errors.conflict(
          `media ${id} is used by post ${user.id} (${user.status}), which is not published yet; remove it from the post first`,
        );
      await tx.query({ ...DELETE_MEDIA_ROW, values: [id] });
    });
    this.rows.forget(id);
    // The record is gone either way; a file that could not be removed is only disk space.
    await this.files
      .remove([media])
      .catch((error: unknown) =>
        this.deps.logger.warn({ err: error, media: id }, 'could not remove a deleted media file'),
      );
  }

  /** `workspace.deleted`: every media record and file of the workspace. Idempotent (safe to redeliver). */
  async purgeWorkspace(workspaceId: string): Promise<number> {
    let removed = 0;
    for (;;) {
      const batch = await this.db.media.findMany({
        where: { workspaceId },
        orderBy: { id: 'asc' },
        take: 200,
      });
      if (batch.length === 0) return removed;
      // Files first: a crash in between leaves rows whose files are gone, which the redelivery removes.
      await this.files.remove(batch);
      const { count } = await this.db.media.deleteMany({ where: { id: { in: batch.map((m) => m.id) } } });
      removed += count;
      for (const media of batch) this.rows.forget(media.id);
    }
  }

  /** The media of these ids that exist, by id (see KnownMediaRows). */
  knownMedia(ids: readonly string[]): Promise<Map<string, KnownMedia>> {
    return this.rows.read(ids);
  }

  /**
   * The file behind a signed URL, opened as a stream (the caller reads it to its end or destroys
   * it); a forged, expired or dangling token is not_found.
   */
  async openSignedFile(token: string): Promise<StoredFile & { mime: string; expiresAt: Date }> {
    const verified = verifyMediaToken(this.deps.config, token, this.deps.now());
    if (!verified) throw errors.notFound('media file');
    const media = (await this.rows.read([verified.mediaId])).get(verified.mediaId);
    if (!media) throw errors.notFound('media file');
    const file = await this.files.open(variantKey(media, verified.variant));
    if (!file) throw errors.notFound('media file');
    const mime = verified.variant === 'jpeg' ? 'image/jpeg' : media.mime;
    return { ...file, mime, expiresAt: verified.expiresAt };
  }

  close(): void {
    this.rows.close();
  }
}

function checkCreateInput(caller: Caller, input: CreateMediaInput): void {
  const { workspaceId } = input;
  if (!workspaceId) throw errors.validation('workspace', 'workspace is required');
  if (!isId('workspace', workspaceId)) throw errors.validation('workspace', 'not a valid workspace id');
  if (caller.workspaceId && caller.workspaceId !== workspaceId)
    throw errors.forbidden('this workspace key can only reach its own workspace');
  const hasData = input.data.length > 0;
  if (hasData && input.url) throw errors.validation('url', 'send either a file or a url, not both');
  if (!hasData && !input.url)
    throw errors.validation('file', 'a file (multipart field "file") or a url is required');
}

const LOCK_MEDIA_ROW = {
  name: 'publishing_lock_media_row',
  text: 'SELECT id FROM media WHERE id = $1 FOR UPDATE',
};
const DELETE_MEDIA_ROW = { name: 'publishing_delete_media_row', text: 'DELETE FROM media WHERE id = $1' };
