import { type EventScope, eventRow, makeEvent, type OutboxRelay, SIGNALS, writeOutbox } from '@svc/bus';
import { type Caller, found, ONE_SNAPSHOT, pageWindow, transaction, visibleTo } from '@svc/db';
import type { WorkspaceDirectory } from '@svc/directory';
import { errors } from '@svc/errors';
import type { Logger } from '@svc/logging';
import { ConcurrencySlots } from '@svc/ops';
import type pg from 'pg';
import type { PublishingConfig } from '../config.ts';
import type { Db } from '../db.ts';
import type { Media, MediaUpload } from '../generated/prisma/client.ts';
import type { PostStore } from '../posts/post-store.ts';
import { type KnownMedia, KnownMediaRows } from './known-media.ts';
import type { MediaFiles } from './media-files.ts';
import { MediaMaker } from './media-maker.ts';
import { SignedFiles } from './signed-files.ts';
import { stageInput } from './staged-stream.ts';
import { type AppendInput, checkWorkspace, isComplete, MediaUploads } from './uploads.ts';

type LibraryConfig = Pick<
  PublishingConfig,
  | 'MEDIA_MAX_BYTES'
  | 'MEDIA_VIDEO_MAX_BYTES'
  | 'ALLOW_PRIVATE_NETWORKS'
  | 'MEDIA_FETCH_TIMEOUT_MS'
  | 'MEDIA_FETCH_TRANSFER_TIMEOUT_MS'
  | 'PUBLIC_BASE_URL'
  | 'MEDIA_URL_SECRET'
  | 'MEDIA_URL_TTL_SECONDS'
  | 'MEDIA_MAX_PIXELS'
  | 'MEDIA_PROBE_TIMEOUT_MS'
  | 'MEDIA_UPLOADS_PER_PARTNER'
  | 'MEDIA_UPLOADS_TOTAL'
  | 'MEDIA_UPLOAD_TTL_SECONDS'
  | 'MEDIA_OPEN_UPLOADS_PER_PARTNER'
>;

export interface CreateMediaInput {
  workspaceId: string;
  /** The uploaded bytes (empty when fetching by URL). */
  data: Uint8Array;
  url: string;
}

/** An upload, and the media it became once complete. */
export interface UploadState {
  upload: MediaUpload;
  media: Media | null;
}

/** How often expired uploads (and their staged bytes) are looked for. */
const SWEEP_EVERY_MS = 10 * 60_000;

/**
 * The media library: media records and their files. Every file is staged first (an upload's
 * parts, a URL's body, a small upload's bytes) and becomes a media record only once its bytes
 * have been read (MediaIntake: real type, dimensions, pixel budget, a video's structure), the
 * reading done in one of the partner's slots (ConcurrencySlots); a refused file is deleted. A
 * media item that a post may still send cannot be deleted; the networks read files through
 * signed URLs.
 */
export class MediaLibrary {
  readonly files: MediaFiles;
  /** What the networks fetch through signed URLs. */
  readonly signedFiles: SignedFiles;
  private readonly uploads: MediaUploads;
  private readonly rows: KnownMediaRows;
  private readonly slots: ConcurrencySlots;
  private readonly maker: MediaMaker;
  private readonly sweeper: NodeJS.Timeout;

  constructor(
    private readonly db: Db,
    private readonly pool: pg.Pool,
    private readonly deps: {
      files: MediaFiles;
      workspaces: WorkspaceDirectory;
      posts: PostStore;
      /** Sends `media.deleted` once committed (gateways drop the files they keep for signed URLs). */
      relay: OutboxRelay;
      config: LibraryConfig;
      logger: Logger;
      now: () => Date;
    },
  ) {
    this.files = deps.files;
    this.rows = new KnownMediaRows(pool);
    this.signedFiles = new SignedFiles(this.rows, deps.files, deps.config, deps.now);
    this.uploads = new MediaUploads(db, pool, deps);
    this.maker = new MediaMaker(db, this.uploads, deps);
    const { MEDIA_UPLOADS_PER_PARTNER: perKey, MEDIA_UPLOADS_TOTAL: total } = deps.config;
    // Reading a file takes a second or so: by then a slot is likely free again.
    this.slots = new ConcurrencySlots({ what: 'media uploads', perKey, total, retryAfterSeconds: 1 });
    this.sweeper = setInterval(() => void this.sweep(), SWEEP_EVERY_MS).unref();
  }

  /**
   * A file fetched by URL or sent whole, staged as an upload of its own and read at once, all in
   * one of the partner's slots. Its upload is gone afterwards, whatever the outcome.
   */
  async create(caller: Caller, input: CreateMediaInput): Promise<Media> {
    checkCreateInput(caller, input);
    return this.slots.run(caller.partnerId, async () => {
      const start = { workspaceId: input.workspaceId, length: null, filename: urlFileName(input.url) };
      const upload = await this.uploads.start(caller, start);
      const field = input.url ? 'url' : 'file';
      try {
        const length = await stageInput(this.files.staging, upload.id, input, this.deps.config);
        return this.kept(await this.maker.make({ ...upload, length, offset: length }, field));
      } finally {
        await this.uploads.remove(upload.id);
      }
    });
  }

  startUpload(caller: Caller, input: { workspaceId: string; length: number | null; filename: string }) {
    return this.uploads.start(caller, input);
  }

  /**
   * One part of an upload; the part that completes it makes the media. An upload started without
   * a length (a form's file streamed through) is done with once it made its media.
   */
  async appendUpload(caller: Caller, input: AppendInput): Promise<UploadState> {
    const upload = await this.uploads.append(caller, input);
    if (!isComplete(upload)) return { upload, media: null };
    const media = await this.complete(caller, upload);
    if (input.last) await this.uploads.remove(upload.id);
    return { upload, media };
  }

  /**
   * An upload and its media. One whose bytes are all in but whose media is not made yet (the last
   * append was refused for a full slot, or its process stopped) is completed here.
   */
  async getUpload(caller: Caller, id: string): Promise<UploadState> {
    const upload = await this.uploads.get(caller, id);
    if (!isComplete(upload)) return { upload, media: null };
    return { upload, media: await this.complete(caller, upload) };
  }

  async deleteUpload(caller: Caller, id: string): Promise<void> {
    const upload = await this.uploads.get(caller, id);
    await this.uploads.remove(upload.id);
  }

  /** The complete upload's media: made now, or found when made before (a retried last part). */
  private async complete(caller: Caller, upload: MediaUpload & { length: number }): Promise<Media> {
    const made = await this.db.media.findUnique({ where: { id: upload.mediaId } });
    if (made) return made;
    return this.kept(await this.slots.run(caller.partnerId, () => this.maker.make(upload, 'file')));
  }

  private kept(media: Media): Media {
    this.rows.keep(media);
    return media;
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
    const [media, total] = await this.db.$transaction(
      [
        this.db.media.findMany({ where, orderBy: { id: 'asc' }, ...pageWindow(query.page, query.limit) }),
        this.db.media.count({ where }),
      ],
      ONE_SNAPSHOT,
    );
    return { media, total };
  }

  /**
   * Removes a media record and its files. Refused (409) while a post that is not published yet
   * (draft, scheduled, publishing, partial or failed: all may still be sent) lists it. The media
   * row is locked while checking, so a post creation that locks the media it references
   * (`FOR SHARE`) cannot slip in between the check and the delete. `media.deleted` is written
   * with the delete: gateways keep recently read files for a few seconds and drop them on it.
   */
  async delete(caller: Caller, id: string): Promise<void> {
    const media = await this.get(caller, id);
    const scope = await this.deps.workspaces.scope(media.workspaceId);
    const announced = await transaction(this.pool, async (tx) => {
      await tx.query({ ...LOCK_MEDIA_ROW, values: [id] });
      const user = await this.deps.posts.unpublishedPostWithMedia(tx, media.workspaceId, id);
      if (user)
        throw errors.conflict(
          `media ${id} is used by post ${user.id} (${user.status}), which is not published yet; remove it from the post first`,
        );
      await tx.query({ ...DELETE_MEDIA_ROW, values: [id] });
      const event = makeEvent(SIGNALS.mediaDeleted, scope, { media: { id } }, this.deps.now());
      return writeOutbox(tx, [eventRow(event)]);
    });
    // An upload that made it is over: asked for later, it is not found rather than made again.
    await this.db.mediaUpload.deleteMany({ where: { mediaId: id } });
    this.rows.forget(id);
    // The record is gone either way; a file that could not be removed is only disk space.
    await this.files
      .remove([media])
      .catch((error: unknown) =>
        this.deps.logger.warn({ err: error, media: id }, 'could not remove a deleted media file'),
      );
    // Sent once the files are gone: a gateway that drops its copy then cannot read the file again.
    void this.deps.relay.publishCommitted(announced);
  }

  /**
   * `workspace.deleted`: every upload, media record and file of the workspace, then `media.purged`
   * (gateways drop the files they keep). Idempotent (safe to redeliver).
   */
  async purgeWorkspace(scope: EventScope): Promise<number> {
    const removed = await this.removeWorkspaceMedia(scope.workspace);
    const purged = makeEvent(SIGNALS.mediaPurged, scope, {}, this.deps.now());
    await this.deps.relay.publishCommitted(await writeOutbox(this.pool, [eventRow(purged)]));
    return removed;
  }

  private async removeWorkspaceMedia(workspaceId: string): Promise<number> {
    await this.uploads.purgeWorkspace(workspaceId);
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

  /** Expired uploads go with their staged bytes (each replica sweeps; deleting twice is harmless). */
  async sweep(): Promise<void> {
    try {
      const removed = await this.uploads.sweep();
      if (removed > 0) this.deps.logger.info({ removed }, 'expired uploads removed');
    } catch (error) {
      this.deps.logger.warn({ err: error }, 'could not remove expired uploads');
    }
  }

  close(): void {
    clearInterval(this.sweeper);
    this.rows.close();
  }
}

function checkCreateInput(caller: Caller, input: CreateMediaInput): void {
  checkWorkspace(caller, input.workspaceId);
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

/** The last path segment of a URL to fetch (its name, checked against its bytes), or ''. */
function urlFileName(url: string): string {
  if (!url) return '';
  try {
    return decodeURIComponent(new URL(url).pathname.split('/').pop() ?? '');
  } catch {
    return '';
  }
}
