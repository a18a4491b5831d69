import { fourCc, readBoxHeader } from './box-header.ts';

export type Container = 'mp4' | 'mov';

/** Brands of still images and image sequences (HEIF, AVIF): ISO-BMFF, but not videos. */
const IMAGE_BRANDS = new Set([
  'mif1',
  'mif2',
  'msf1',
  'heic',
  'heix',
  'hevc',
  'heim',
  'heis',
  'avif',
  'avis',
]);
/** Brands of MP4 movies: ISO base media (isom, iso2 to iso9), MP4 v1 and v2, AVC, iTunes video. */
const MP4_BRANDS = /^(isom|iso[2-9a-z]|mp41|mp42|avc1|M4V |M4VP|f4v )$/;
const QUICKTIME_BRAND = 'qt  ';
/**
 * QuickTime files older than the 'ftyp' box begin with one of these; an ISO file always begins
 * with 'ftyp' (ISO/IEC 14496-12 section 4.3).
 */
export const QUICKTIME_FIRST_BOXES = new Set(['moov', 'mdat', 'wide', 'free', 'skip', 'pnot']);

/**
 * What kind of movie the first bytes of a file announce, from its 'ftyp' box ('qt  ' is
 * QuickTime; an MP4 brand, major or compatible, is MP4; an image brand is not a movie at all),
 * or from a first box only QuickTime files begin with. Null for anything else (a JPEG, a PNG,
 * a HEIC or AVIF photo, text). Reads only the first box, so 64 bytes are plenty.
 */
export function sniffContainer(firstBytes: Uint8Array): Container | null {
  const header = readBoxHeader(firstBytes, 0);
  if (typeof header === 'string') return null;
  if (header.type !== 'ftyp') return QUICKTIME_FIRST_BOXES.has(header.type) ? 'mov' : null;
  const brands = ftypBrands(firstBytes, header.headerBytes, header.sizeBytes ?? firstBytes.length);
  const [major] = brands;
  if (major === undefined || brands.some((brand) => IMAGE_BRANDS.has(brand))) return null;
  if (major === QUICKTIME_BRAND) return 'mov';
  return brands.some((brand) => MP4_BRANDS.test(brand)) ? 'mp4' : null;
}

/** The major brand, then the compatible ones (the 4-byte minor version between them is skipped). */
function ftypBrands(bytes: Uint8Array, payloadStart: number, boxEnd: number): string[] {
  const end = Math.min(boxEnd, bytes.length);
  const major = fourCc(bytes, payloadStart);
  if (major === null || payloadStart + 8 > end) return [];
  const brands = [major];
  for (let at = payloadStart + 8; at + 4 <= end; at += 4) {
    const brand = fourCc(bytes, at);
    if (brand !== null) brands.push(brand);
  }
  return brands;
}
