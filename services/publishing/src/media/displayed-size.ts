import type { ImageWork } from './image-work.ts';

/**
 * Width and height as the image is shown, not as its pixels are stored: a phone records a
 * portrait photo as landscape pixels with an EXIF orientation that turns it a quarter (5 to 8),
 * and every viewer, the networks included, shows it turned. The networks' aspect-ratio rules
 * apply to what they show. Reads the headers only (no decoding); null when the image library
 * cannot read them even though the signature was recognised (or the image is over the pixel
 * budget, which the upload checks first).
 */
export async function displayedSize(
  images: ImageWork,
  bytes: Buffer,
): Promise<{ width: number; height: number } | null> {
  try {
    const { autoOrient } = await images.run(bytes, (image) => image.metadata());
    return { width: autoOrient.width, height: autoOrient.height };
  } catch {
    return null;
  }
}
