import { found, isUniqueViolation } from '@svc/db';
import { ServiceError } from '@svc/errors';
import type { Db } from '../db.ts';
import type { Media, MediaUpload } from '../generated/prisma/client.ts';
import { type IntakeField, MediaIntake } from './intake.ts';
import type { MediaFiles } from './media-files.ts';
import type { MediaUploads } from './uploads.ts';

type MakerConfig = ConstructorParameters<typeof MediaIntake>[1];

/**
 * Makes a complete upload its media: reads the staged file (MediaIntake), moves it to the media's
 * key and writes the row under the id the upload chose at its start, so a retried completion
 * makes one media. A refused file goes with its upload; a failure of ours (storage, database)
 * leaves both for a retry.
 */
export class MediaMaker {
  private readonly intake: MediaIntake;

  constructor(
    private readonly db: Db,
    private readonly uploads: MediaUploads,
    private readonly deps: {
      files: MediaFiles;
      config: MakerConfig;
      now: () => Date;
    },
  ) {
    this.intake = new MediaIntake(deps.files, deps.config);
  }

  async make(upload: MediaUpload & { length: number }, field: IntakeField): Promise<Media> {
    const detected = await this.intake
      .inspect(upload.id, upload.length, field)
      .catch(async (error: unknown) => {
        if (error instanceof ServiceError && error.code === 'validation_error')
          await this.uploads.remove(upload.id);
        throw error;
      });
    await this.deps.files.staging.commitStaged(upload.id, upload.length, upload.mediaId);
    const data = {
      id: upload.mediaId,
      partnerId: upload.partnerId,
      workspaceId: upload.workspaceId,
      ...detected,
      size: upload.length,
      storageKey: upload.mediaId,
      createdAt: this.deps.now(),
    };
    try {
      return await this.db.media.create({ data });
    } catch (error) {
      // Made meanwhile by a retry of the same last part: one media either way.
      if (!isUniqueViolation(error)) throw error;
      return found(await this.db.media.findUnique({ where: { id: upload.mediaId } }), 'media');
    }
  }
}
