/**
 * Meta downloads every media URL it is given (facts §2.2, §2.6). So does the sandbox: it fetches
 * the URL and reads the real format and dimensions from the bytes, so a product test that hands
 * over an unreachable URL, an HTML page or a wrongly shaped image fails as it would in production.
 */
export type ImageFormat = 'jpeg' | 'png' | 'gif' | 'bmp' | 'tiff' | 'webp';

export type FetchedMedia =
  | {
      ok: true;
      bytes: number;
      contentType: string;
      format: ImageFormat | null;
      width: number;
      height: number;
    }
  | { ok: false; reason: string };

export async function fetchMedia(url: string, timeoutMs: number): Promise<FetchedMedia> {
  let parsed: URL;
  try {
    parsed = new URL(url);
  } catch {
    return { ok: false, reason: 'not a URL' };
  }
  if (parsed.protocol !== 'http:' && parsed.protocol !== 'https:')
    return { ok: false, reason: 'not http(s)' };
  try {
    const res = await fetch(parsed, { signal: AbortSignal.timeout(timeoutMs) });
    if (!res.ok) {
      await res.body?.cancel();
      return { ok: false, reason: `HTTP ${res.status}` };
    }
    const data = Buffer.from(await res.arrayBuffer());
    const probe = probeImage(data);
    const contentType = res.headers.get('content-type') ?? '';
    return { ok: true, bytes: data.length, contentType, ...probe };
  } catch (error) {
    return { ok: false, reason: error instanceof Error ? error.message : String(error) };
  }
}

export function probeImage(data: Buffer): { format: ImageFormat | null; width: number; height: number } {
  if (data.length >= 3 && data[0] === 0xff && data[1] === 0xd8 && data[2] === 0xff)
    return { format: 'jpeg', ...jpegSize(data) };
  if (
    data.length >= 24 &&
    data.subarray(0, 8).equals(Buffer.from([0x89, 0x50, 0x4e, 0x47, 0x0d, 0x0a, 0x1a, 0x0a]))
  ) {
    return { format: 'png', width: data.readUInt32BE(16), height: data.readUInt32BE(20) };
  }
  if (data.length >= 10 && data.subarray(0, 4).toString('latin1') === 'GIF8') {
    return { format: 'gif', width: data.readUInt16LE(6), height: data.readUInt16LE(8) };
  }
  if (data.length >= 26 && data.subarray(0, 2).toString('latin1') === 'BM') {
    return { format: 'bmp', width: Math.abs(data.readInt32LE(18)), height: Math.abs(data.readInt32LE(22)) };
  }
  const head = data.subarray(0, 4).toString('latin1');
  if (head === 'II*\u0000' || head === 'MM\u0000*') return { format: 'tiff', width: 0, height: 0 };
  if (head === 'RIFF' && data.subarray(8, 12).toString('latin1') === 'WEBP')
    return { format: 'webp', width: 0, height: 0 };
  return { format: null, width: 0, height: 0 };
}

/** Walks JPEG markers to the first start-of-frame segment, which holds height and width. */
function jpegSize(data: Buffer): { width: number; height: number } {
  let offset = 2;
  while (offset + 9 < data.length) {
    if (data[offset] !== 0xff) {
      offset++;
      continue;
    }
    const marker = data[offset + 1] ?? 0;
    const isFrame = marker >= 0xc0 && marker <= 0xcf && marker !== 0xc4 && marker !== 0xc8 && marker !== 0xcc;
    if (isFrame) return { height: data.readUInt16BE(offset + 5), width: data.readUInt16BE(offset + 7) };
    if (marker === 0xd8 || marker === 0x01 || (marker >= 0xd0 && marker <= 0xd7)) {
      offset += 2;
      continue;
    }
    offset += 2 + data.readUInt16BE(offset + 2);
  }
  return { width: 0, height: 0 };
}
