/**
 * What an uploaded image really is, read from its bytes (never from the file name or the client's
 * Content-Type): JPEG (SOF marker), PNG (IHDR) and WebP (VP8, VP8L, VP8X) with their pixel
 * dimensions as stored (before any EXIF orientation: the record keeps the displayed ones, see
 * displayed-size.ts). Anything else is refused, naming what it is when the signature is
 * recognisable. Pure: no I/O, no decoding beyond the headers.
 */
const ACCEPTED_MIME = ['image/jpeg', 'image/png', 'image/webp'] as const;
type AcceptedMime = (typeof ACCEPTED_MIME)[number];

/** JPEG's own ceiling; a PNG header claiming more is refused before anything decodes it. */
const MAX_SIDE = 65_535;

const ACCEPTED_TEXT = 'JPEG, PNG and WebP images are accepted, and MP4 and MOV videos';

export type Detection =
  | { ok: true; kind: 'image'; mime: AcceptedMime; width: number; height: number }
  | { ok: false; reason: string };

/**
 * What the bytes are. With `maxPixels`, an image whose header claims more pixels is refused
 * before anything decodes it (decoding is what costs memory: see image-work.ts).
 */
export function detectMedia(bytes: Uint8Array, maxPixels = Number.POSITIVE_INFINITY): Detection {
  const detected = detectFormat(bytes);
  if (!detected.ok || detected.width * detected.height <= maxPixels) return detected;
  return overPixelBudget(detected, maxPixels);
}

function detectFormat(bytes: Uint8Array): Detection {
  if (bytes.length === 0) return refused('the file is empty');
  if (startsWith(bytes, [0xff, 0xd8, 0xff])) return jpeg(bytes);
  if (startsWith(bytes, [0x89, 0x50, 0x4e, 0x47, 0x0d, 0x0a, 0x1a, 0x0a])) return png(bytes);
  if (ascii(bytes, 0, 4) === 'RIFF' && ascii(bytes, 8, 4) === 'WEBP') return webp(bytes);
  const other = recognise(bytes);
  return refused(
    other ? `the file is ${other}, which is not accepted` : 'the file is not a recognised image or video',
  );
}

/**
 * Whether the first bytes are those of an accepted image format (JPEG, PNG, WebP): such a file is
 * an image whatever else it claims, and held to the image rules (size, dimensions, pixels).
 */
export function hasImageSignature(bytes: Uint8Array): boolean {
  return (
    startsWith(bytes, [0xff, 0xd8, 0xff]) ||
    startsWith(bytes, [0x89, 0x50, 0x4e, 0x47, 0x0d, 0x0a, 0x1a, 0x0a]) ||
    (ascii(bytes, 0, 4) === 'RIFF' && ascii(bytes, 8, 4) === 'WEBP')
  );
}

const FORMAT_NAMES: Record<AcceptedMime, string> = {
  'image/jpeg': 'JPEG',
  'image/png': 'PNG',
  'image/webp': 'WebP',
};

/** The refusal names the image's size and the budget, and why the budget costs nothing. */
function overPixelBudget(image: { mime: AcceptedMime; width: number; height: number }, maxPixels: number) {
  const { mime, width, height } = image;
  const reason =
    `the file is a ${FORMAT_NAMES[mime]} image of ${width}x${height} pixels (${megapixels(width * height)}), ` +
    `more than the limit of ${megapixels(maxPixels)} (${maxPixels} pixels); the networks show far smaller images ` +
    '(Instagram at most 1440 pixels wide, Facebook photos at most 2048 pixels a side): resize it and upload again';
  return { ok: false, reason } satisfies Detection;
}

function megapixels(pixels: number): string {
  return `${Number((pixels / 1_000_000).toFixed(pixels < 1_000_000 ? 3 : 1))} megapixels`;
}

function refused(what: string): Detection {
  return { ok: false, reason: `${what}; ${ACCEPTED_TEXT}` };
}

function image(mime: AcceptedMime, width: number, height: number, name: string): Detection {
  if (width < 1 || height < 1)
    return refused(`the ${name} image has no valid dimensions (${width}x${height})`);
  if (width > MAX_SIDE || height > MAX_SIDE)
    return refused(`the ${name} image is ${width}x${height} pixels, more than ${MAX_SIDE} on a side`);
  return { ok: true, kind: 'image', mime, width, height };
}

// JPEG: walk the marker segments from SOI to the first start-of-frame (SOF0-SOF15 except DHT,
// JPG and DAC), whose payload is precision, height, width.
const SOF_MARKERS = new Set([0xc0, 0xc1, 0xc2, 0xc3, 0xc5, 0xc6, 0xc7, 0xc9, 0xca, 0xcb, 0xcd, 0xce, 0xcf]);

function jpeg(bytes: Uint8Array): Detection {
  const corrupt = refused(
    'the file starts like a JPEG but its dimensions cannot be read (truncated or corrupt)',
  );
  let offset = 2;
  while (offset < bytes.length) {
    if (bytes[offset] !== 0xff) return corrupt;
    // Any number of 0xFF fill bytes may precede a marker.
    while (bytes[offset] === 0xff) offset++;
    const marker = bytes[offset];
    offset++;
    if (marker === undefined) return corrupt;
    // Markers without a length: TEM and the restart markers.
    if (marker === 0x01 || (marker >= 0xd0 && marker <= 0xd7)) continue;
    // End of image, or image data before any frame header: no dimensions to find.
    if (marker === 0xd9 || marker === 0xda || marker === 0xd8) return corrupt;
    const length = u16be(bytes, offset);
    if (length === null || length < 2) return corrupt;
    if (SOF_MARKERS.has(marker)) {
      const height = u16be(bytes, offset + 3);
      const width = u16be(bytes, offset + 5);
      if (height === null || width === null) return corrupt;
      return image('image/jpeg', width, height, 'JPEG');
    }
    offset += length;
  }
  return corrupt;
}

// PNG: the first chunk must be IHDR (13 bytes: width, height, ...).
function png(bytes: Uint8Array): Detection {
  if (ascii(bytes, 12, 4) !== 'IHDR')
    return refused('the file starts like a PNG but has no IHDR header (truncated or corrupt)');
  const width = u32be(bytes, 16);
  const height = u32be(bytes, 20);
  if (width === null || height === null) return refused('the PNG file is truncated');
  return image('image/png', width, height, 'PNG');
}

// WebP: RIFF container whose first chunk is VP8 (lossy), VP8L (lossless) or VP8X (extended).
function webp(bytes: Uint8Array): Detection {
  const chunk = ascii(bytes, 12, 4);
  const data = 20;
  const truncated = refused('the WebP file is truncated or corrupt');
  if (chunk === 'VP8 ') {
    // Frame tag (3 bytes), start code 9D 01 2A, then 14-bit width and height (2 scale bits each).
    if (!startsWith(bytes.subarray(data + 3), [0x9d, 0x01, 0x2a])) return truncated;
    const width = u16le(bytes, data + 6);
    const height = u16le(bytes, data + 8);
    if (width === null || height === null) return truncated;
    return image('image/webp', width & 0x3fff, height & 0x3fff, 'WebP');
  }
  if (chunk === 'VP8L') {
    // Signature 0x2F, then width-1 and height-1 in 14 bits each, little-endian bit order.
    if (bytes[data] !== 0x2f) return truncated;
    const bits = u32le(bytes, data + 1);
    if (bits === null) return truncated;
    return image('image/webp', (bits & 0x3fff) + 1, ((bits >>> 14) & 0x3fff) + 1, 'WebP');
  }
  if (chunk === 'VP8X') {
    const flags = bytes[data];
    const width = u24le(bytes, data + 4);
    const height = u24le(bytes, data + 7);
    if (flags === undefined || width === null || height === null) return truncated;
    if (flags & 0x02) return refused('the file is an animated WebP, which is not accepted');
    return image('image/webp', width + 1, height + 1, 'WebP');
  }
  return truncated;
}

/** A human name for other well-known formats, so the refusal says what the file is. */
function recognise(bytes: Uint8Array): string | null {
  const head = ascii(bytes, 0, 12);
  if (head.startsWith('GIF87a') || head.startsWith('GIF89a')) return 'a GIF image';
  if (head.startsWith('%PDF-')) return 'a PDF document';
  if (head.startsWith('BM') && bytes.length > 14) return 'a BMP image';
  if (head.startsWith('II*\0') || head.startsWith('MM\0*')) return 'a TIFF image';
  if (startsWith(bytes, [0x00, 0x00, 0x01, 0x00])) return 'an ICO icon';
  if (startsWith(bytes, [0xff, 0x0a]) || ascii(bytes, 4, 4) === 'JXL ') return 'a JPEG XL image';
  if (startsWith(bytes, [0x1a, 0x45, 0xdf, 0xa3])) return 'a WebM/Matroska video';
  if (head.startsWith('RIFF')) {
    const form = ascii(bytes, 8, 4);
    if (form === 'AVI ') return 'an AVI video';
    if (form === 'WAVE') return 'a WAV audio file';
  }
  if (head.startsWith('ID3') || startsWith(bytes, [0xff, 0xfb])) return 'an MP3 audio file';
  if (head.startsWith('OggS')) return 'an Ogg audio/video file';
  if (startsWith(bytes, [0x50, 0x4b, 0x03, 0x04])) return 'a ZIP archive';
  if (ascii(bytes, 4, 4) === 'ftyp') return isoMedia(ascii(bytes, 8, 4));
  const text = leadingText(bytes).toLowerCase();
  if (isSvg(text)) return 'an SVG image';
  if (text.startsWith('<!doctype html') || startsTag(text, 0, '<html')) return 'an HTML page';
  return null;
}

/**
 * Whether markup (lower-cased) is an SVG document: an optional XML declaration, then comments, a
 * doctype and whitespace in any number, then an `<svg` tag; or an XML document with an `<svg` tag
 * anywhere in it. Scanned by hand rather than with a regex: the bytes are an untrusted upload, and
 * a pattern with a repeated group of comments backtracked exponentially on a run of empty
 * comments (40 of them froze the process for minutes). Every step here moves forward with
 * indexOf, so the work is linear in the text (at most 1 KiB) whatever it holds.
 */
function isSvg(text: string): boolean {
  let at = 0;
  if (text.startsWith('<?xml')) {
    const end = text.indexOf('>', at);
    if (end < 0) return false;
    at = end + 1;
  }
  for (;;) {
    at = skipSpace(text, at);
    const close = text.startsWith('<!--', at) ? '-->' : text.startsWith('<!doctype', at) ? '>' : null;
    if (!close) break;
    const end = text.indexOf(close, at + 4);
    if (end < 0) return false;
    at = end + close.length;
  }
  if (startsTag(text, at, '<svg')) return true;
  return text.startsWith('<?xml') && containsTag(text, '<svg');
}

/** Whether a tag name starts at `at`, followed by whitespace or `>` (not a longer name). */
function startsTag(text: string, at: number, tag: string): boolean {
  if (!text.startsWith(tag, at)) return false;
  const next = text.charAt(at + tag.length);
  return next === '>' || isSpace(next);
}

function containsTag(text: string, tag: string): boolean {
  for (let at = text.indexOf(tag); at >= 0; at = text.indexOf(tag, at + 1))
    if (startsTag(text, at, tag)) return true;
  return false;
}

function skipSpace(text: string, from: number): number {
  let at = from;
  while (at < text.length && isSpace(text.charAt(at))) at++;
  return at;
}

function isSpace(char: string): boolean {
  return char === ' ' || char === '\n' || char === '\t' || char === '\r' || char === '\f';
}

/** ISO base media files (`ftyp` box): HEIC/HEIF and AVIF images, MP4/QuickTime/3GP video. */
function isoMedia(brand: string): string {
  if (['heic', 'heix', 'heim', 'heis', 'hevc', 'hevx', 'hevm', 'hevs'].includes(brand)) return 'a HEIC image';
  if (['mif1', 'msf1'].includes(brand)) return 'a HEIF image';
  if (['avif', 'avis'].includes(brand)) return 'an AVIF image';
  if (brand === 'qt  ') return 'a QuickTime (MOV) video';
  if (brand.startsWith('3g')) return 'a 3GP video';
  if (brand === 'M4A ') return 'an M4A audio file';
  return 'an MP4 video';
}

function leadingText(bytes: Uint8Array): string {
  let text = Buffer.from(bytes.subarray(0, 1024)).toString('utf8');
  if (text.charCodeAt(0) === 0xfeff) text = text.slice(1);
  return text.trimStart();
}

function startsWith(bytes: Uint8Array, signature: number[]): boolean {
  return bytes.length >= signature.length && signature.every((b, i) => bytes[i] === b);
}

function ascii(bytes: Uint8Array, offset: number, length: number): string {
  if (bytes.length < offset + length) return '';
  return String.fromCharCode(...bytes.subarray(offset, offset + length));
}

function u16be(bytes: Uint8Array, offset: number): number | null {
  if (bytes.length < offset + 2) return null;
  return ((bytes[offset] as number) << 8) | (bytes[offset + 1] as number);
}

function u16le(bytes: Uint8Array, offset: number): number | null {
  if (bytes.length < offset + 2) return null;
  return (bytes[offset] as number) | ((bytes[offset + 1] as number) << 8);
}

function u24le(bytes: Uint8Array, offset: number): number | null {
  if (bytes.length < offset + 3) return null;
  return (
    (bytes[offset] as number) | ((bytes[offset + 1] as number) << 8) | ((bytes[offset + 2] as number) << 16)
  );
}

function u32be(bytes: Uint8Array, offset: number): number | null {
  if (bytes.length < offset + 4) return null;
  return new DataView(bytes.buffer, bytes.byteOffset, bytes.byteLength).getUint32(offset, false);
}

function u32le(bytes: Uint8Array, offset: number): number | null {
  if (bytes.length < offset + 4) return null;
  return new DataView(bytes.buffer, bytes.byteOffset, bytes.byteLength).getUint32(offset, true);
}
