import type { EventEmitter } from 'node:events';
import { Deadline } from '@svc/net';
import { Agent, type Dispatcher, request } from 'undici';

/**
 * Meta downloads every media URL it is given (facts §2.2, §2.6). So does the sandbox: it fetches
 * the URL and reads the real format and dimensions from the bytes, so a product test that hands
 * over an unreachable URL, an HTML page or a wrongly shaped image fails as it would in production.
 */
type ImageFormat = 'jpeg' | 'png' | 'gif' | 'bmp' | 'tiff' | 'webp';

export type FetchedMedia =
  | {
      ok: true;
      bytes: number;
      /** The file itself (the Send API hosts what it downloaded). */
      data: Buffer;
      contentType: string;
      format: ImageFormat | null;
      width: number;
      height: number;
      /** More than the caller's `maxBytes` arrived: `data` holds only the first bytes, and the rest was not read. */
      overLimit: boolean;
    }
  | { ok: false; reason: string };

/** What global fetch follows before it gives up with "fetch failed" (Fetch standard: 20). */
const MAX_REDIRECTS = 20;
const REDIRECTS = new Set([301, 302, 303, 307, 308]);
// fetch's error texts: the reason ends up in the Graph error message, so it stays the same.
const FETCH_FAILED = 'fetch failed';
const BODY_FAILED = 'terminated';
const TIMED_OUT = 'The operation was aborted due to timeout';

/**
 * Media downloads go through undici's `request` on one keep-alive pool rather than global fetch:
 * under publishing load fetch's WHATWG layers (Request/Response, web streams, AbortSignal
 * plumbing) cost the sandbox more CPU than the rest of a container create. What fetch did is kept:
 * redirects followed (up to 20), one deadline over the whole download, and the same failure texts.
 */
const agent = new Agent({ keepAliveTimeout: 4_000 });

class DownloadFailure extends Error {}

/**
 * Downloads `url`. Past `maxBytes` (videos can be hundreds of MB) reading stops and the answer
 * says `overLimit`, so a file too big for Meta costs the sandbox no more than the limit in memory.
 */
export async function fetchMedia(
  url: string,
  timeoutMs: number,
  maxBytes = Number.POSITIVE_INFINITY,
): Promise<FetchedMedia> {
  let parsed: URL;
  try {
    parsed = new URL(url);
  } catch {
    return { ok: false, reason: 'not a URL' };
  }
  if (parsed.protocol !== 'http:' && parsed.protocol !== 'https:')
    return { ok: false, reason: 'not http(s)' };
  if (parsed.username || parsed.password)
    return {
      ok: false,
      reason: `Request cannot be constructed from a URL that includes credentials: ${parsed.href}`,
    };
  const deadline = new Deadline(timeoutMs);
  try {
    return await download(parsed, deadline.signal, maxBytes);
  } catch (error) {
    if (deadline.expired) return { ok: false, reason: TIMED_OUT };
    return { ok: false, reason: error instanceof DownloadFailure ? error.message : FETCH_FAILED };
  } finally {
    deadline.clear();
  }
}

async function download(start: URL, signal: EventEmitter, maxBytes: number): Promise<FetchedMedia> {
  let target = start;
  for (let redirects = 0; ; redirects++) {
    const res = await request(target, {
      dispatcher: agent,
      signal,
      headers: { accept: '*/*', 'accept-encoding': 'identity' },
    });
    const location = REDIRECTS.has(res.statusCode) ? res.headers.location : undefined;
    if (location === undefined && res.statusCode >= 200 && res.statusCode < 300)
      return readImage(res, maxBytes);
    await res.body.dump().catch(() => {});
    if (location === undefined) return { ok: false, reason: `HTTP ${res.statusCode}` };
    if (redirects === MAX_REDIRECTS) throw new DownloadFailure(FETCH_FAILED);
    target = redirectTarget(target, location);
  }
}

/** Like fetch: a redirect must stay on http(s) and carry no credentials, or the download fails. */
function redirectTarget(from: URL, location: string | string[]): URL {
  const next = new URL(String(location), from);
  if ((next.protocol !== 'http:' && next.protocol !== 'https:') || next.username || next.password)
    throw new DownloadFailure(FETCH_FAILED);
  return next;
}

async function readImage(res: Dispatcher.ResponseData, maxBytes: number): Promise<FetchedMedia> {
  const type = res.headers['content-type'];
  const contentType = Array.isArray(type) ? type.join(', ') : (type ?? '');
  const { data, overLimit } = await readBody(res, maxBytes);
  return { ok: true, bytes: data.length, data, contentType, overLimit, ...probeImage(data) };
}

/** The body, or its first bytes when it is longer than `maxBytes` (the rest is dropped unread). */
async function readBody(res: Dispatcher.ResponseData, maxBytes: number) {
  if (maxBytes === Number.POSITIVE_INFINITY) {
    try {
      return { data: Buffer.from(await res.body.arrayBuffer()), overLimit: false };
    } catch {
      throw new DownloadFailure(BODY_FAILED);
    }
  }
  const chunks: Buffer[] = [];
  let total = 0;
  try {
    for await (const chunk of res.body) {
      chunks.push(chunk as Buffer);
      total += (chunk as Buffer).length;
      if (total > maxBytes) {
        res.body.destroy();
        return { data: Buffer.concat(chunks), overLimit: true };
      }
    }
  } catch {
    throw new DownloadFailure(BODY_FAILED);
  }
  return { data: Buffer.concat(chunks), overLimit: false };
}

function probeImage(data: Buffer): { format: ImageFormat | null; width: number; height: number } {
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
