import { ServiceError } from '@svc/errors';
import sharp from 'sharp';
import type { PublishingContext } from '../context.ts';
import type { Media } from '../generated/prisma/client.ts';
import { variantKey } from './media.ts';
import { mediaUrl } from './signed-url.ts';

/** Conversions in flight in this process, so a carousel or several targets convert a file once. */
const converting = new Map<string, Promise<void>>();

/**
 * The URL a network fetches this media from at publish time: a signed, expiring URL on the
 * gateway. The photo network takes JPEG only, so for it a PNG or WebP is converted to JPEG once
 * (stored as the `jpeg` variant beside the original, reused afterwards) and that is what it gets.
 */
export async function publishableMediaUrl(
  ctx: PublishingContext,
  media: Pick<Media, 'id' | 'mime' | 'storageKey'>,
  network: string,
): Promise<string> {
  if (network === 'photo_network' && media.mime !== 'image/jpeg') {
    await ensureJpeg(ctx, media);
    return mediaUrl(ctx.config, media.id, 'jpeg', ctx.now());
  }
  return mediaUrl(ctx.config, media.id, 'original', ctx.now());
}

async function ensureJpeg(ctx: PublishingContext, media: Pick<Media, 'id' | 'storageKey'>): Promise<void> {
  const running = converting.get(media.id);
  if (running) return running;
  const work = (async () => {
    const key = variantKey(media, 'jpeg');
    if (await ctx.storage.get(key)) return;
    const original = await ctx.storage.get(variantKey(media, 'original'));
    if (!original)
      throw new ServiceError('internal_error', `the file of media ${media.id} is missing from storage`);
    await ctx.storage.put(key, await toJpeg(original));
    ctx.logger.info({ media: media.id }, 'media converted to JPEG for the photo network');
  })();
  converting.set(media.id, work);
  try {
    await work;
  } finally {
    converting.delete(media.id);
  }
}

/** JPEG has no transparency: transparent pixels become white rather than black. */
export function toJpeg(image: Buffer): Promise<Buffer> {
  return sharp(image).rotate().flatten({ background: '#ffffff' }).jpeg({ quality: 90 }).toBuffer();
}
