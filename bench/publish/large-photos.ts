// 5b. A signed download of a photo the size partners post. The throughput phase's JPEG is a flat
// 7 KB, where what each byte costs on its way (storage → publishing → gRPC → gateway → fetcher)
// hardly shows; a 1080×1350 photo is about 1 MB.
import { randomBytes } from 'node:crypto';
import { createClient, PublishingService } from '@svc/contracts';
import { uploadFile } from '@svc/testing';
import sharp from 'sharp';
import type { RunContext } from './context.ts';
import { type DownloadCpu, downloadCpu } from './downloads.ts';
import { LARGE_PHOTOS, pool, say } from './settings.ts';

const WIDTH = 1080;
const HEIGHT = 1350;

/**
 * The first fetch of each of several distinct photos: each read from publishing. (A second pass
 * would not measure the kept copies: they are kept in a bounded memory, oldest out first, which a
 * pass over more photos than it holds empties before it comes back to them.)
 */
export async function largePhotoPhase(ctx: RunContext): Promise<{ bytes: number; read: DownloadCpu }> {
  const photo = await noisePhoto();
  say(`▶ large photos: ${LARGE_PHOTOS} photos of ${(photo.length / 1e6).toFixed(2)} MB, each fetched once …`);
  const urls = await signedUrls(ctx, photo);
  return { bytes: photo.length, read: await downloadCpu(ctx, urls) };
}

/** A JPEG of random pixels: nothing for the encoder to compress, so the size of a real photo. */
function noisePhoto(): Promise<Buffer> {
  return sharp(randomBytes(WIDTH * HEIGHT * 3), { raw: { width: WIDTH, height: HEIGHT, channels: 3 } })
    .jpeg({ quality: 80 })
    .toBuffer();
}

/** Each upload its own media (a comment segment makes each file distinct), signed as for a Page. */
async function signedUrls(ctx: RunContext, photo: Buffer): Promise<string[]> {
  const { workspace } = ctx.fixtureOf(0);
  const publishing = createClient(PublishingService, ctx.publishingUrl);
  const urls: string[] = [];
  try {
    await pool(LARGE_PHOTOS, 4, async (i) => {
      const mediaId = await uploadFile(
        ctx.gatewayUrl,
        ctx.key,
        workspace,
        numbered(photo, i),
        `large-${i}.jpg`,
      );
      const { url } = await publishing.getMediaUrl({
        caller: { partnerId: ctx.partnerId, workspaceId: '' },
        mediaId,
        network: 'page_network',
      });
      urls.push(url);
    });
  } finally {
    publishing.close();
  }
  return urls;
}

/** The JPEG with a comment (COM segment) naming `n` right after its start marker. */
function numbered(jpeg: Buffer, n: number): Buffer {
  const text = Buffer.from(`bench large photo ${n}`);
  const segment = Buffer.alloc(4);
  segment.writeUInt16BE(0xfffe, 0);
  segment.writeUInt16BE(text.length + 2, 2);
  return Buffer.concat([jpeg.subarray(0, 2), segment, text, jpeg.subarray(2)]);
}
