import { ServiceError } from '@svc/errors';
import type { Logger } from '@svc/logging';
import type { PublishingConfig } from '../config.ts';
import type { Media } from '../generated/prisma/client.ts';
import { detectMedia } from './detect.ts';
import { ImageWork } from './image-work.ts';
import { MEDIA_VARIANTS, type MediaVariant, mediaUrl } from './signed-url.ts';
import type { ByteRange, MediaStorage, StoredFile, WholeRead } from './storage.ts';

type FilesConfig = Pick<
  PublishingConfig,
  | 'MEDIA_URLS'
  | 'PUBLIC_BASE_URL'
  | 'MEDIA_URL_SECRET'
  | 'MEDIA_URL_TTL_SECONDS'
  | 'MEDIA_MAX_PIXELS'
  | 'MEDIA_IMAGE_CONCURRENCY'
>;

/** A media as its files are found: its id, type and storage key. */
export type StoredMedia = Pick<Media, 'id' | 'mime' | 'storageKey'>;

/** Where a variant of a media lives in storage: the original under its key, others beside it. */
export function variantKey(media: Pick<Media, 'storageKey'>, variant: MediaVariant): string {
  return variant === 'original' ? media.storageKey : `${media.storageKey}.${variant}`;
}

/**
 * The files behind media records: written, read, removed, and offered to the networks as signed
 * URLs, converted to JPEG for the photo network. Reads go to storage every time: keeping recent
 * files in memory measured no gain in bench:publish (the storage read is not what a target waits
 * on), and memory per process is better spent on decodes. Every image decode of the process
 * goes through `images` (a pixel budget and a bound on how many run at once).
 */
export class MediaFiles {
  readonly images: ImageWork;
  /** Files arriving in parts, staged under their upload's key until complete. */
  readonly staging: Pick<MediaStorage, 'writePart' | 'readStaged' | 'commitStaged' | 'discardStaged'>;
  /** Conversions in flight in this process, so a carousel or several targets convert a file once. */
  private readonly converting = new Map<string, Promise<void>>();

  constructor(
    private readonly storage: MediaStorage,
    private readonly config: FilesConfig,
    private readonly logger: Logger,
    private readonly now: () => Date,
  ) {
    this.images = new ImageWork(config);
    this.staging = storage;
  }

  put(key: string, data: Buffer): Promise<void> {
    return this.storage.put(key, data);
  }

  /** A file's bytes (or a range of them) as a stream, with its size; null when storage holds nothing under the key. */
  open(key: string, range?: ByteRange): Promise<StoredFile | null> {
    return this.storage.open(key, range);
  }

  /** A file whole when it is at most `maxBytes`, else its size alone; null when storage holds nothing under the key. */
  readWhole(key: string, maxBytes: number): Promise<WholeRead | null> {
    return this.storage.readWhole(key, maxBytes);
  }

  /** Every variant of these media, from memory and from storage. */
  async remove(media: Pick<Media, 'storageKey'>[]): Promise<void> {
    const keys = media.flatMap((m) => MEDIA_VARIANTS.map((variant) => variantKey(m, variant)));
    await Promise.all(keys.map((key) => this.storage.delete(key)));
  }

  /**
   * The URL a network fetches this media from at publish time: a signed, expiring URL on the
   * gateway, or the storage's own (MEDIA_URLS=storage). The photo network takes JPEG only, so for
   * it a PNG or WebP is converted to JPEG once (stored as the `jpeg` variant beside the original,
   * reused afterwards) and that is what it gets. A video is offered as it is (both kinds of URL
   * serve range requests, which the networks use for video).
   */
  async publishableUrl(media: StoredMedia, network: string): Promise<string> {
    if (network === 'photo_network' && needsJpeg(media.mime)) {
      await this.ensureJpeg(media);
      return this.urlOf(media, 'jpeg', 'image/jpeg');
    }
    return this.urlOf(media, 'original', media.mime);
  }

  private urlOf(media: StoredMedia, variant: MediaVariant, mime: string): Promise<string> | string {
    if (this.config.MEDIA_URLS === 'storage' && this.storage.directUrl)
      return this.storage.directUrl(variantKey(media, variant), mime, this.config.MEDIA_URL_TTL_SECONDS);
    return mediaUrl(this.config, media.id, variant, this.now());
  }

  private async ensureJpeg(media: Pick<Media, 'id' | 'storageKey'>): Promise<void> {
    const running = this.converting.get(media.id);
    if (running) return running;
    const work = this.convert(media);
    this.converting.set(media.id, work);
    try {
      await work;
    } finally {
      this.converting.delete(media.id);
    }
  }

  private async convert(media: Pick<Media, 'id' | 'storageKey'>): Promise<void> {
    const key = variantKey(media, 'jpeg');
    if (await this.storage.get(key)) return;
    const original = await this.storage.get(variantKey(media, 'original'));
    if (!original)
      throw new ServiceError('internal_error', `the file of media ${media.id} is missing from storage`);
    // Stored before the pixel budget was (or was lowered): refused from its header, not decoded.
    const detected = detectMedia(original, this.images.maxPixels);
    if (!detected.ok)
      throw new ServiceError(
        'unsupported',
        `media ${media.id} cannot be converted to JPEG for the photo network: ${detected.reason}`,
      );
    const jpeg = await toJpeg(this.images, original).catch((error: unknown) => {
      // A file the image library cannot decode will not decode on a redelivery either.
      throw new ServiceError(
        'unsupported',
        `media ${media.id} cannot be converted to JPEG: it could not be decoded`,
        {
          cause: error,
        },
      );
    });
    await this.storage.put(key, jpeg);
    this.logger.info({ media: media.id }, 'media converted to JPEG for the photo network');
  }
}

/**
 * The pixels are turned as the EXIF orientation says (the output carries no orientation), so the
 * network shows the photo as its record's dimensions describe it (see displayed-size.ts). JPEG has
 * no transparency: transparent pixels become white rather than black.
 */
function toJpeg(images: ImageWork, bytes: Buffer): Promise<Buffer> {
  return images.run(bytes, (image) =>
    image.autoOrient().flatten({ background: '#ffffff' }).jpeg({ quality: 90 }).toBuffer(),
  );
}

/** What the photo network is given as JPEG: an image in another format (never a video). */
function needsJpeg(mime: string): boolean {
  return mime.startsWith('image/') && mime !== 'image/jpeg';
}
