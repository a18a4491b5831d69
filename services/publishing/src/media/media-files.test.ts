import { mkdtemp, readdir, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { newId } from '@svc/ids';
import sharp from 'sharp';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { webpBomb } from '../../test/image-bomb.ts';
import { detectMedia } from './detect.ts';
import { ImageWork } from './image-work.ts';
import { LocalMediaStorage } from './local-storage.ts';
import { MediaFiles } from './media-files.ts';
import { verifyMediaToken } from './signed-url.ts';

let dir: string;
let storage: LocalMediaStorage;
let files: MediaFiles;
const config = {
  MEDIA_URLS: 'gateway' as const,
  PUBLIC_BASE_URL: 'https://api.example.com',
  MEDIA_URL_SECRET: 'unit-test-secret-xyz',
  MEDIA_URL_TTL_SECONDS: 3600,
  MEDIA_MAX_PIXELS: 36_000_000,
  MEDIA_IMAGE_CONCURRENCY: 2,
};

beforeAll(async () => {
  dir = await mkdtemp(path.join(tmpdir(), 'media-unit-'));
  const silent = { info() {}, warn() {}, error() {}, debug() {} };
  // Only storage, the URL settings, the clock and the logger are used by the conversion: no database here.
  storage = new LocalMediaStorage(dir);
  files = new MediaFiles(storage, config, silent as never, () => new Date());
});
afterAll(() => rm(dir, { recursive: true, force: true }));

async function stored(mime: string, image: Buffer) {
  const id = newId('media');
  await storage.put(id, image);
  return { id, mime, storageKey: id };
}

const tokenOf = (url: string) => verifyMediaToken(config, url.split('/').pop() as string);

describe('MediaFiles.publishableUrl', () => {
  // Guarantee: a transparent PNG for the photo network becomes a JPEG variant (white background), converted once.
  it('converts PNG to JPEG once for the photo network', async () => {
    const png = await sharp({
      create: { width: 40, height: 30, channels: 4, background: { r: 0, g: 0, b: 0, alpha: 0 } },
    })
      .png()
      .toBuffer();
    const media = await stored('image/png', png);
    const urls = await Promise.all([1, 2, 3].map(() => files.publishableUrl(media, 'photo_network')));
    for (const url of urls) expect(tokenOf(url)).toMatchObject({ mediaId: media.id, variant: 'jpeg' });
    const jpeg = await storage.get(`${media.id}.jpeg`);
    expect(detectMedia(jpeg as Buffer)).toMatchObject({
      ok: true,
      mime: 'image/jpeg',
      width: 40,
      height: 30,
    });
    const { data } = await sharp(jpeg as Buffer)
      .raw()
      .toBuffer({ resolveWithObject: true });
    expect(data[0]).toBeGreaterThan(240); // white, not black
    const written = (await readdir(dir)).filter((f) => f.startsWith(media.id));
    expect(written.sort()).toEqual([media.id, `${media.id}.jpeg`]);
  });

  // Guarantee: a stored variant is reused, not converted again.
  it('reuses the stored JPEG', async () => {
    const media = await stored(
      'image/webp',
      await sharp({ create: { width: 8, height: 8, channels: 3, background: '#0f0' } })
        .webp()
        .toBuffer(),
    );
    await storage.put(`${media.id}.jpeg`, Buffer.from('already converted'));
    await files.publishableUrl(media, 'photo_network');
    expect((await storage.get(`${media.id}.jpeg`))?.toString()).toBe('already converted');
  });

  // Guarantee: a JPEG, or any file for the page network, is served as the original without conversion.
  it('serves originals otherwise', async () => {
    const png = await stored(
      'image/png',
      await sharp({ create: { width: 8, height: 8, channels: 3, background: '#00f' } })
        .png()
        .toBuffer(),
    );
    expect(tokenOf(await files.publishableUrl(png, 'page_network'))).toMatchObject({
      variant: 'original',
    });
    expect(await storage.get(`${png.id}.jpeg`)).toBeNull();
    const jpeg = await stored(
      'image/jpeg',
      await sharp({ create: { width: 8, height: 8, channels: 3, background: '#00f' } })
        .jpeg()
        .toBuffer(),
    );
    expect(tokenOf(await files.publishableUrl(jpeg, 'photo_network'))).toMatchObject({
      variant: 'original',
    });
  });
});

describe('decompression bombs', () => {
  // Guarantee: an image stored before the pixel budget (or under a higher one) whose header
  // claims more pixels is refused for the photo network from its header, without decoding it
  // (converting a 16383x16383 WebP took 2.5 GiB); no JPEG variant is written.
  it('refuses to convert an image over the pixel budget', async () => {
    const media = await stored('image/webp', await webpBomb(16383, 16383));
    const rssBefore = process.memoryUsage().rss;
    const started = performance.now();
    const refusal = await files.publishableUrl(media, 'photo_network').catch((error: unknown) => error);
    expect(performance.now() - started).toBeLessThan(1_000);
    expect(process.memoryUsage().rss - rssBefore).toBeLessThan(200 * 1024 * 1024);
    expect(refusal).toMatchObject({ code: 'unsupported' });
    expect(String((refusal as Error).message)).toContain('16383x16383 pixels');
    expect(await storage.get(`${media.id}.jpeg`)).toBeNull();
  });

  // Guarantee: whatever reaches the image library past the header checks, sharp itself decodes
  // nothing over the budget (limitInputPixels): a bomb is refused, a smaller image converts.
  it('keeps the image library within the budget', async () => {
    const images = new ImageWork({ MEDIA_MAX_PIXELS: 1_000_000, MEDIA_IMAGE_CONCURRENCY: 1 });
    const toJpeg = (bytes: Buffer) => images.run(bytes, (image) => image.jpeg().toBuffer());
    await expect(toJpeg(await webpBomb(1001, 1000))).rejects.toThrow(/pixel limit/);
    await expect(toJpeg(await webpBomb(1000, 1000))).resolves.toBeInstanceOf(Buffer);
  });

  // Guarantee: no more images than MEDIA_IMAGE_CONCURRENCY are worked on at once; the rest wait.
  it('works on a bounded number of images at once', async () => {
    const images = new ImageWork({ MEDIA_MAX_PIXELS: 1_000_000, MEDIA_IMAGE_CONCURRENCY: 2 });
    const bytes = await webpBomb(10, 10);
    let active = 0;
    let most = 0;
    const sizes = await Promise.all(
      Array.from({ length: 6 }, () =>
        images.run(bytes, async (image) => {
          most = Math.max(most, ++active);
          await new Promise((resolve) => setTimeout(resolve, 20));
          const { width } = await image.metadata();
          active--;
          return width;
        }),
      ),
    );
    expect(sizes).toEqual([10, 10, 10, 10, 10, 10]);
    expect(most).toBe(2);
  });
});
