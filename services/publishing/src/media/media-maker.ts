import { found, isUniqueViolation } from '@svc/db';
import { errors, ServiceError } from '@svc/errors';
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
    if (detected.kind === 'image' && namedAsVideo(upload.filename)) {
      await this.uploads.remove(upload.id);
      throw errors.validation(
        field,
        `the file is ${IMAGE_NAMES[detected.mime] ?? 'an image'}, not the video its name (${upload.filename}) says; upload it as an image, named for what it is`,
      );
    }
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

/** What a refused image is called in its refusal. */
const IMAGE_NAMES: Record<string, string> = {
  'image/jpeg': 'a JPEG image',
  'image/png': 'a PNG image',
  'image/webp': 'a WebP image',
};

/**
 * A file named as a video whose bytes are an image is refused as what it is (issue 28): a partner
 * who meant to publish a Reel learns at upload, not when the post is refused for want of a video.
 */
function namedAsVideo(filename: string): boolean {
  const dot = filename.lastIndexOf('.');
  return dot >= 0 && ['mp4', 'mov', 'm4v', 'qt'].includes(filename.slice(dot + 1).toLowerCase());
}
