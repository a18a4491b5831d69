import { type Caller, type Fields, selectList, visibleTo } from '@svc/db';
import type { WorkspaceDirectory } from '@svc/directory';
import { errors, ServiceError } from '@svc/errors';
import { isId, newId } from '@svc/ids';
import type { Logger } from '@svc/logging';
import type pg from 'pg';
import type { PublishingConfig } from '../config.ts';
import type { Db } from '../db.ts';
import type { MediaUpload } from '../generated/prisma/client.ts';
import { hasImageSignature } from './detect.ts';
import type { MediaFiles } from './media-files.ts';

type UploadsConfig = Pick<
  PublishingConfig,
  'MEDIA_MAX_BYTES' | 'MEDIA_VIDEO_MAX_BYTES' | 'MEDIA_UPLOAD_TTL_SECONDS' | 'MEDIA_OPEN_UPLOADS_PER_PARTNER'
>;

/** The largest part one append carries (the gateway sends 1 MiB); bounds what one call holds. */
const MAX_PART_BYTES = 4 * 1024 * 1024;
const MAX_FILENAME_LENGTH = 255;

export interface AppendInput {
  uploadId: string;
  offset: number;
  chunk: Uint8Array;
  /** The chunk ends the file (an upload started without a length). */
  last: boolean;
}

/** Whether every byte is in: the file can be read and become its media. */
export const isComplete = (upload: MediaUpload): upload is MediaUpload & { length: number } =>
  upload.length !== null && upload.offset === upload.length;

const UPLOAD_FIELDS: Fields<MediaUpload> = {
  id: true,
  partnerId: true,
  workspaceId: true,
  length: true,
  // A reserved word in SQL.
  offset: '"offset"',
  filename: true,
  maxBytes: true,
  mediaId: true,
  writingUntil: true,
  expiresAt: true,
  createdAt: true,
};

/**
 * Claims the upload for one append (in the caller's scope, unexpired, not claimed by a live
 * writer): `writing_until` is set to this claim's own end, which later statements match on.
 */
const CLAIM_UPLOAD = {
  name: 'publishing_claim_upload',
  text: `UPDATE media_uploads SET writing_until = $5
          WHERE id = $1 AND partner_id = $2 AND ($3 = '' OR workspace_id = $3) AND expires_at > $4
            AND (writing_until IS NULL OR writing_until <= $4)
          RETURNING ${selectList(UPLOAD_FIELDS)}`,
};
const CLAIMED_BY_ANOTHER = {
  name: 'publishing_upload_claimed',
  text: `SELECT id FROM media_uploads
          WHERE id = $1 AND partner_id = $2 AND ($3 = '' OR workspace_id = $3) AND expires_at > $4`,
};
/** Records the part and lets go of the claim, if the claim is still this append's. */
const RECORD_APPEND = {
  name: 'publishing_record_upload_append',
  text: `UPDATE media_uploads SET "offset" = $2, length = $3, max_bytes = $4, writing_until = NULL
          WHERE id = $1 AND writing_until = $5
          RETURNING ${selectList(UPLOAD_FIELDS)}`,
};
const RELEASE_UPLOAD = {
  name: 'publishing_release_upload',
  text: 'UPDATE media_uploads SET writing_until = NULL WHERE id = $1 AND writing_until = $2',
};
const OPEN_UPLOADS = {
  name: 'publishing_open_uploads',
  text: `SELECT count(*)::int AS open FROM media_uploads
          WHERE partner_id = $1 AND expires_at > $2 AND (length IS NULL OR "offset" < length)`,
};
/** How long an append may take to write its part before another may claim the upload. */
const WRITE_CLAIM_MS = 60_000;

/**
 * Files arriving in parts: a row per upload (whose, how long, how far) and its bytes staged in
 * storage under the upload's id. Each append is written at the upload's offset while it holds the
 * upload's claim, so two appends of one upload never interleave, and a part whose offset is not
 * the upload's is a conflict (tus's 409). An upload is held to the video size limit, or the image
 * limit once its first bytes show an image; it expires after MEDIA_UPLOAD_TTL_SECONDS, and a
 * partner has at most MEDIA_OPEN_UPLOADS_PER_PARTNER unfinished at once.
 */
export class MediaUploads {
  constructor(
    private readonly db: Db,
    private readonly pool: pg.Pool,
    private readonly deps: {
      files: MediaFiles;
      workspaces: WorkspaceDirectory;
      config: UploadsConfig;
      logger: Logger;
      now: () => Date;
    },
  ) {}

  async start(
    caller: Caller,
    input: { workspaceId: string; length: number | null; filename: string },
  ): Promise<MediaUpload> {
    checkWorkspace(caller, input.workspaceId);
    const { config, now } = this.deps;
    const { length } = input;
    if (length !== null && (!Number.isSafeInteger(length) || length < 0))
      throw errors.validation('length', 'the length must be a whole number of bytes');
    if (length !== null && length > config.MEDIA_VIDEO_MAX_BYTES)
      throw errors.fileTooLarge('file', config.MEDIA_VIDEO_MAX_BYTES);
    await this.deps.workspaces.confirmOwned(caller, input.workspaceId);
    await this.checkOpenUploads(caller.partnerId);
    const at = now();
    return this.db.mediaUpload.create({
      data: {
        id: newId('upload', at.getTime()),
        partnerId: caller.partnerId,
        workspaceId: input.workspaceId,
        length,
        filename: input.filename.slice(0, MAX_FILENAME_LENGTH),
        maxBytes: config.MEDIA_VIDEO_MAX_BYTES,
        mediaId: newId('media', at.getTime()),
        expiresAt: new Date(at.getTime() + config.MEDIA_UPLOAD_TTL_SECONDS * 1000),
        createdAt: at,
      },
    });
  }

  /** An unexpired upload of the caller's scope; another partner's or workspace's is not_found. */
  async get(caller: Caller, id: string): Promise<MediaUpload> {
    const upload = isId('upload', id)
      ? await this.db.mediaUpload.findFirst({
          where: { id, ...visibleTo(caller), expiresAt: { gt: this.deps.now() } },
        })
      : null;
    if (!upload) throw errors.notFound('upload');
    return upload;
  }

  /**
   * Writes a part at its offset and records it, the upload claimed meanwhile (a second append
   * of the same upload is a conflict until the first is recorded). No transaction stays open
   * while the part is written: a claim, the write, the record. A part over the size limit ends
   * the upload (its bytes are deleted): no later part could make it acceptable.
   */
  async append(caller: Caller, input: AppendInput): Promise<MediaUpload> {
    if (input.chunk.length > MAX_PART_BYTES)
      throw errors.validation('chunk', `a part carries at most ${MAX_PART_BYTES} bytes`);
    if (!isId('upload', input.uploadId)) throw errors.notFound('upload');
    const now = this.deps.now();
    const claim = new Date(now.getTime() + WRITE_CLAIM_MS);
    const upload = await this.claim(caller, input.uploadId, now, claim);
    let recorded: MediaUpload | undefined;
    try {
      recorded = await this.write(upload, input, claim);
      return recorded;
    } catch (error) {
      if (!(error instanceof TooLarge)) throw error;
      await this.remove(upload.id);
      throw error.refusal;
    } finally {
      if (!recorded) await this.pool.query({ ...RELEASE_UPLOAD, values: [upload.id, claim] }).catch(() => {});
    }
  }

  private async claim(caller: Caller, id: string, now: Date, claim: Date): Promise<MediaUpload> {
    const scope = [id, caller.partnerId, caller.workspaceId, now];
    const { rows } = await this.pool.query<MediaUpload>({ ...CLAIM_UPLOAD, values: [...scope, claim] });
    if (rows[0]) return rows[0];
    const { rowCount } = await this.pool.query({ ...CLAIMED_BY_ANOTHER, values: scope });
    if (!rowCount) throw errors.notFound('upload');
    throw errors.conflict(`another part of upload ${id} is being written right now; retry once it is done`);
  }

  private async write(upload: MediaUpload, input: AppendInput, claim: Date): Promise<MediaUpload> {
    const end = checkPart(upload, input);
    const maxBytes = this.limitOf(upload, input);
    if (end > maxBytes || (upload.length ?? 0) > maxBytes)
      throw new TooLarge(errors.fileTooLarge('file', maxBytes));
    if (input.chunk.length > 0)
      await this.deps.files.staging.writePart(upload.id, input.offset, Buffer.from(input.chunk));
    const length = input.last ? end : upload.length;
    const { rows } = await this.pool.query<MediaUpload>({
      ...RECORD_APPEND,
      values: [upload.id, end, length, maxBytes, claim],
    });
    const recorded = rows[0];
    if (!recorded)
      throw errors.conflict(
        `upload ${upload.id} was taken by another part while this one was written; check its offset`,
      );
    return recorded;
  }

  /** The upload's size limit: the image limit from the moment its first bytes show an image. */
  private limitOf(upload: MediaUpload, input: AppendInput): number {
    if (input.offset === 0 && hasImageSignature(input.chunk))
      return Math.min(upload.maxBytes, this.deps.config.MEDIA_MAX_BYTES);
    return upload.maxBytes;
  }

  /** The upload's row and staged bytes, whatever state it is in (a refused or finished one). */
  async remove(id: string): Promise<void> {
    await this.db.mediaUpload.deleteMany({ where: { id } });
    await this.discard([id]);
  }

  /** Removes expired uploads (finished or not) and their staged bytes; how many went. */
  async sweep(): Promise<number> {
    const gone = await this.db.mediaUpload.findMany({
      where: { expiresAt: { lte: this.deps.now() } },
      select: { id: true },
      take: 500,
    });
    const ids = gone.map((upload) => upload.id);
    await this.db.mediaUpload.deleteMany({ where: { id: { in: ids } } });
    await this.discard(ids);
    return ids.length;
  }

  /** `workspace.deleted`: every upload of the workspace and its staged bytes. Idempotent. */
  async purgeWorkspace(workspaceId: string): Promise<void> {
    const uploads = await this.db.mediaUpload.findMany({ where: { workspaceId }, select: { id: true } });
    const ids = uploads.map((upload) => upload.id);
    await this.discard(ids);
    await this.db.mediaUpload.deleteMany({ where: { id: { in: ids } } });
  }

  private async discard(ids: string[]): Promise<void> {
    for (const id of ids)
      await this.deps.files.staging
        .discardStaged(id)
        .catch((error: unknown) =>
          this.deps.logger.warn({ err: error, upload: id }, 'could not remove the bytes of an upload'),
        );
  }

  private async checkOpenUploads(partnerId: string): Promise<void> {
    const limit = this.deps.config.MEDIA_OPEN_UPLOADS_PER_PARTNER;
    const { rows } = await this.pool.query<{ open: number }>({
      ...OPEN_UPLOADS,
      values: [partnerId, this.deps.now()],
    });
    if ((rows[0]?.open ?? 0) >= limit)
      throw new ServiceError(
        'rate_limited',
        `too many unfinished uploads: at most ${limit} per partner at once; finish or delete some (DELETE /v1/uploads/:id), or wait for them to expire`,
        { retryAfterSeconds: 60 },
      );
  }
}

/** Where the part ends; refuses a part that is not at the upload's offset or overruns its length. */
function checkPart(upload: MediaUpload, input: AppendInput): number {
  if (input.offset !== upload.offset)
    throw errors.conflict(
      `upload ${upload.id} has ${upload.offset} bytes: the next part starts at offset ${upload.offset}, not ${input.offset}`,
    );
  const end = input.offset + input.chunk.length;
  if (upload.length !== null && end > upload.length)
    throw errors.validation(
      'chunk',
      `the part ends at byte ${end}, past the upload's length of ${upload.length}`,
    );
  if (input.last && upload.length !== null && end !== upload.length)
    throw errors.validation(
      'chunk',
      `the upload's length is ${upload.length}: the file is not complete at ${end}`,
    );
  return end;
}

/** The workspace an upload is started in: a valid id, and the workspace key's own. */
export function checkWorkspace(caller: Caller, workspaceId: string): void {
  if (!workspaceId) throw errors.validation('workspace', 'workspace is required');
  if (!isId('workspace', workspaceId)) throw errors.validation('workspace', 'not a valid workspace id');
  if (caller.workspaceId && caller.workspaceId !== workspaceId)
    throw errors.forbidden('this workspace key can only reach its own workspace');
}

/** A part past the size limit: the upload is removed before the refusal is thrown on. */
class TooLarge extends Error {
  constructor(readonly refusal: ServiceError) {
    super(refusal.message);
  }
}
