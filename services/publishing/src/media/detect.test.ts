import sharp from 'sharp';
import { describe, expect, it } from 'vitest';
import { webpBomb } from '../../test/image-bomb.ts';
import { detectMedia } from './detect.ts';

const canvas = (width: number, height: number, channels: 3 | 4 = 3) =>
  sharp({ create: { width, height, channels, background: { r: 200, g: 40, b: 90, alpha: 0.5 } } });

describe('detectMedia: accepted images', () => {
  // Guarantee: real JPEG, PNG and WebP files (every WebP chunk kind) yield their true mime and dimensions.
  it.each([
    ['baseline JPEG', () => canvas(37, 21).jpeg().toBuffer(), 'image/jpeg'],
    ['progressive JPEG', () => canvas(64, 48).jpeg({ progressive: true }).toBuffer(), 'image/jpeg'],
    [
      'JPEG with EXIF before the frame',
      () => canvas(30, 40).jpeg().withMetadata({ orientation: 6 }).toBuffer(),
      'image/jpeg',
    ],
    ['PNG', () => canvas(300, 1).png().toBuffer(), 'image/png'],
    ['PNG with alpha', () => canvas(5, 9, 4).png().toBuffer(), 'image/png'],
    ['lossy WebP (VP8)', () => canvas(123, 77).webp().toBuffer(), 'image/webp'],
    ['lossless WebP (VP8L)', () => canvas(123, 77).webp({ lossless: true }).toBuffer(), 'image/webp'],
    ['WebP with alpha (VP8X)', () => canvas(123, 77, 4).webp().toBuffer(), 'image/webp'],
  ] as const)('%s', async (_name, make, mime) => {
    const bytes = await make();
    const meta = await sharp(bytes).metadata();
    expect(detectMedia(bytes)).toEqual({
      ok: true,
      kind: 'image',
      mime,
      width: meta.width,
      height: meta.height,
    });
  });

  // Guarantee: the 14-bit and 24-bit dimension fields are decoded in full (large sizes, not just small ones).
  it('reads large dimensions', async () => {
    const webp = await canvas(4000, 3).webp({ lossless: true }).toBuffer();
    expect(detectMedia(webp)).toMatchObject({ ok: true, width: 4000, height: 3 });
    const jpeg = await canvas(3, 5000).jpeg().toBuffer();
    expect(detectMedia(jpeg)).toMatchObject({ ok: true, width: 3, height: 5000 });
  });
});

describe('detectMedia: refusals', () => {
  const svg =
    '<svg xmlns="http://www.w3.org/2000/svg" width="10" height="10"><rect width="10" height="10"/></svg>';
  const ftyp = (brand: string) =>
    Buffer.concat([Buffer.from([0, 0, 0, 24]), Buffer.from(`ftyp${brand}`), Buffer.alloc(16)]);

  // Guarantee: other formats are refused with a message naming what the file is and what is accepted.
  it.each([
    ['GIF', () => canvas(4, 4).gif().toBuffer(), 'a GIF image'],
    ['AVIF', () => canvas(16, 16).avif().toBuffer(), 'an AVIF image'],
    ['TIFF', () => canvas(4, 4).tiff().toBuffer(), 'a TIFF image'],
    ['SVG', async () => Buffer.from(svg), 'an SVG image'],
    [
      'SVG with XML prolog',
      async () => Buffer.from(`<?xml version="1.0"?>\n<!-- logo -->\n${svg}`),
      'an SVG image',
    ],
    ['HEIC', async () => ftyp('heic'), 'a HEIC image'],
    ['MP4', async () => ftyp('isom'), 'an MP4 video'],
    ['QuickTime', async () => ftyp('qt  '), 'a QuickTime (MOV) video'],
    ['WebM', async () => Buffer.from([0x1a, 0x45, 0xdf, 0xa3, 0, 0, 0, 0]), 'a WebM/Matroska video'],
    ['PDF', async () => Buffer.from('%PDF-1.7\n%âãÏÓ\n'), 'a PDF document'],
    ['HTML', async () => Buffer.from('<!DOCTYPE html><html><body>hi</body></html>'), 'an HTML page'],
  ] as const)('refuses %s', async (_name, make, what) => {
    const result = detectMedia(await make());
    expect(result.ok).toBe(false);
    if (result.ok) return;
    expect(result.reason).toContain(`the file is ${what}, which is not accepted`);
    expect(result.reason).toContain('JPEG, PNG and WebP images are accepted');
  });

  // Guarantee: unknown bytes, empty files and truncated headers are refused, never misread.
  it.each([
    ['garbage', Buffer.from('definitely not an image, just some text'), 'not a recognised image'],
    ['empty', Buffer.alloc(0), 'the file is empty'],
    [
      'JPEG signature only',
      Buffer.from([0xff, 0xd8, 0xff, 0xe0, 0x00]),
      'JPEG but its dimensions cannot be read',
    ],
    ['PNG signature only', Buffer.from([0x89, 0x50, 0x4e, 0x47, 0x0d, 0x0a, 0x1a, 0x0a]), 'no IHDR'],
    ['WebP header only', Buffer.from('RIFF\x10\0\0\0WEBPVP8 '), 'WebP file is truncated'],
  ])('refuses %s', (_name, bytes, words) => {
    const result = detectMedia(bytes);
    expect(result).toMatchObject({ ok: false });
    if (!result.ok) expect(result.reason).toContain(words);
  });

  // Guarantee: every prefix of a valid JPEG is either refused or read correctly; nothing throws.
  it('never throws on truncated files', async () => {
    for (const bytes of [await canvas(20, 10).jpeg().toBuffer(), await canvas(20, 10).webp().toBuffer()]) {
      for (let n = 0; n < Math.min(bytes.length, 400); n++) {
        const result = detectMedia(bytes.subarray(0, n));
        if (result.ok) expect(result).toMatchObject({ width: 20, height: 10 });
      }
    }
  });

  // Guarantee: an animated WebP is refused by name (the networks take still images only).
  it('refuses an animated WebP', () => {
    // VP8X header with the animation flag, canvas 4x8, then an (empty) ANIM chunk.
    const vp8x = Buffer.from([0x02, 0, 0, 0, 3, 0, 0, 7, 0, 0]);
    const body = Buffer.concat([
      Buffer.from('WEBPVP8X'),
      Buffer.from([10, 0, 0, 0]),
      vp8x,
      Buffer.from('ANIM\x06\0\0\0\0\0\0\0\0\0', 'latin1'),
    ]);
    const riff = Buffer.concat([Buffer.from('RIFF'), Buffer.alloc(4), body]);
    riff.writeUInt32LE(body.length, 4);
    const result = detectMedia(riff);
    expect(result).toMatchObject({ ok: false });
    if (!result.ok) expect(result.reason).toContain('animated WebP');
    vp8x[0] = 0x10; // alpha only: a still image
    const still = Buffer.concat([
      Buffer.from('RIFF'),
      Buffer.alloc(4),
      Buffer.from('WEBPVP8X'),
      Buffer.from([10, 0, 0, 0]),
      vp8x,
    ]);
    expect(detectMedia(still)).toMatchObject({ ok: true, width: 4, height: 8 });
  });

  // Guarantee: a PNG header claiming absurd dimensions is refused before anything decodes it.
  it('refuses absurd dimensions', async () => {
    const bytes = Buffer.from(await canvas(2, 2).png().toBuffer());
    bytes.writeUInt32BE(100_000, 16);
    const result = detectMedia(bytes);
    expect(result).toMatchObject({ ok: false });
    if (!result.ok) expect(result.reason).toContain('100000x2');
  });
});

describe('detectMedia: hostile markup', () => {
  const svg = '<svg xmlns="http://www.w3.org/2000/svg" width="4" height="4"/>';
  const timed = (bytes: Buffer) => {
    const started = performance.now();
    const result = detectMedia(bytes);
    return { result, ms: performance.now() - started };
  };

  // Guarantee: sniffing the type of an untrusted upload takes linear time: runs of empty comments
  // (which froze the process for minutes under the old regex) are classified in well under 50 ms.
  it.each([40, 1_000])('classifies %i empty comments at once', (repetitions) => {
    for (const tail of ['', 'x', svg]) {
      const { result, ms } = timed(Buffer.from(`${'<!---->'.repeat(repetitions)}${tail}`));
      expect(ms).toBeLessThan(50);
      expect(result.ok).toBe(false);
    }
  });

  // Guarantee: SVG is still named as SVG through comments, a doctype, an XML declaration and
  // whitespace in any order, and markup that only looks like it is not.
  it.each([
    ['comments', `<!-- a -->\n<!----><!-- b -- c -->  ${svg}`, 'an SVG image'],
    [
      'declaration, doctype and comment',
      `<?xml version="1.0"?>\n<!DOCTYPE svg PUBLIC "-//W3C//DTD SVG 1.1//EN" "x.dtd">\n<!-- c -->\n<SVG>`,
      'an SVG image',
    ],
    [
      'XML with an svg element further in',
      '<?xml version="1.0"?><root><svg:svg/><svg\tx="1"/></root>',
      'an SVG image',
    ],
    ['a tag that only starts like svg', '<svgfoo/>', 'not a recognised image'],
    ['an unclosed comment', `<!-- ${svg}`, 'not a recognised image'],
    ['HTML', '<html lang="en"><body/></html>', 'an HTML page'],
  ])('%s', (_name, text, words) => {
    const result = detectMedia(Buffer.from(text));
    expect(result.ok).toBe(false);
    if (!result.ok) expect(result.reason).toContain(words);
  });
});

describe('detectMedia: pixel budget', () => {
  // Guarantee: an image whose header claims more pixels than the budget is refused from the
  // header alone, naming its size, the budget and why the budget costs nothing; at the budget it passes.
  it('refuses an image over the budget', async () => {
    const refusal = detectMedia(await webpBomb(16383, 16383), 36_000_000);
    expect(refusal.ok).toBe(false);
    if (refusal.ok) return;
    for (const words of [
      '16383x16383 pixels (268.4 megapixels)',
      'limit of 36 megapixels',
      'Instagram',
      '1440',
    ])
      expect(refusal.reason).toContain(words);
    expect(detectMedia(await webpBomb(6000, 6000), 36_000_000)).toMatchObject({ ok: true, width: 6000 });
    expect(detectMedia(await webpBomb(6001, 6000), 36_000_000)).toMatchObject({ ok: false });
  });
});
