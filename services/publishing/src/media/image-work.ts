import sharp, { type Sharp } from 'sharp';
import type { PublishingConfig } from '../config.ts';
import { Semaphore } from './semaphore.ts';

type ImageConfig = Pick<PublishingConfig, 'MEDIA_MAX_PIXELS' | 'MEDIA_IMAGE_CONCURRENCY'>;

/**
 * Every call of the image library (sharp) in this process goes through here, because decoding is
 * where an upload costs memory: a lossless WebP of a few KB can claim 16383x16383 pixels, and
 * converting one to JPEG took 2.5 GiB. So no input larger than MEDIA_MAX_PIXELS is decoded (sharp
 * reads the header and refuses it), inputs are read sequentially (no whole-image random-access
 * copy), each image uses one libvips thread, and at most MEDIA_IMAGE_CONCURRENCY images are
 * worked on at once; more wait their turn.
 */
export class ImageWork {
  readonly maxPixels: number;
  private readonly slots: Semaphore;

  constructor(config: ImageConfig) {
    this.maxPixels = config.MEDIA_MAX_PIXELS;
    this.slots = new Semaphore(config.MEDIA_IMAGE_CONCURRENCY);
    // Process-wide: threads per image. On a small machine more threads per image buy little
    // speed and multiply each image's working memory; parallelism is the semaphore's to bound.
    sharp.concurrency(1);
  }

  /** Runs `work` on the image in these bytes, in one of the slots. */
  run<T>(bytes: Buffer, work: (image: Sharp) => Promise<T>): Promise<T> {
    return this.slots.run(() =>
      work(sharp(bytes, { limitInputPixels: this.maxPixels, sequentialRead: true })),
    );
  }
}
