import sharp from 'sharp';

/**
 * A lossless WebP that decodes to `width` x `height` white pixels, in under 50 bytes: a
 * decompression bomb. sharp makes a small one-colour image, in which every pixel is the same
 * zero-bit code, and its VP8L header is then set to the claimed size (14 bits each for width-1
 * and height-1 after the 0x2F signature), which the pixel data satisfies at any size. (sharp
 * making it at 16383x16383 directly takes 12 s and 2.4 GiB; decoding this one takes as much.)
 */
export async function webpBomb(width: number, height: number): Promise<Buffer> {
  const solid = { width: 16, height: 16, channels: 3 as const, background: '#ffffff' };
  const bytes = Buffer.from(await sharp({ create: solid }).webp({ lossless: true }).toBuffer());
  if (bytes.toString('latin1', 12, 16) !== 'VP8L' || bytes[20] !== 0x2f)
    throw new Error('sharp did not write a simple lossless WebP');
  const kept = bytes.readUInt32LE(21) & ~0x0fffffff;
  bytes.writeUInt32LE((kept | ((width - 1) & 0x3fff) | (((height - 1) & 0x3fff) << 14)) >>> 0, 21);
  return bytes;
}
