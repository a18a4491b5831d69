import { mkdtemp, readdir, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { newId } from '@svc/ids';
import sharp from 'sharp';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { detectMedia } from './detect.ts';
import { LocalMediaStorage } from './local-storage.ts';
import { MediaFiles } from './media-files.ts';
import { verifyMediaToken } from './signed-url.ts';

let dir: string;
let storage: LocalMediaStorage;
let files: MediaFiles;
const config = {
  PUBLIC_BASE_URL: 'https://api.example.com',
  MEDIA_URL_SECRET: 'unit-test-secret-xyz',
  MEDIA_URL_TTL_SECONDS: 3600,
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
