import { type BoxHeader, LONG_HEADER_BYTES, readBoxHeader, SHORT_HEADER_BYTES } from './box-header.ts';
import type { ByteReader } from './byte-reader.ts';
import { type Container, QUICKTIME_FIRST_BOXES, sniffContainer } from './container.ts';
import type { ProbeLimits } from './limits.ts';
import { VideoProbeError } from './probe-error.ts';

/** What the top level of a file holds: the two boxes the facts come from, and where 'moov' was. */
export type FileLayout = {
  container: Container;
  /** The 'ftyp' box, whole (null in a QuickTime file older than 'ftyp'). */
  ftyp: Uint8Array | null;
  /** The 'moov' box, whole. */
  moov: Uint8Array;
  moovAtFront: boolean;
  sizeBytes: number;
};

/** An 'ftyp' lists a handful of brands; kilobytes of them are not a real file's. */
const MAX_FTYP_BYTES = 4096;

/**
 * Walks the top-level boxes, keeping 'ftyp' and 'moov' and skipping the rest ('mdat' is the
 * bulk). With the file's size known it stops at the first 'mdat' after 'moov', once its header
 * shows it fits in the file; otherwise it reads to the end to learn the size.
 */
export async function readLayout(
  reader: ByteReader,
  limits: ProbeLimits,
  knownSizeBytes: number | null,
): Promise<FileLayout> {
  let container: Container | null = null;
  let ftyp: Uint8Array | null = null;
  let moov: Uint8Array | null = null;
  let moovAtFront = false;
  let mdatSeen = false;
  for (let boxes = 0; ; boxes++) {
    const start = reader.position;
    const next = await readHeader(reader, boxes === 0);
    if (next === null) break;
    const { header, bytes } = next;
    if (boxes === 0) container = firstBoxContainer(header);
    if (boxes >= limits.maxBoxes) throw malformed(`more than ${limits.maxBoxes} top-level boxes`);
    checkFits(header, start, limits, knownSizeBytes);
    if (header.type === 'ftyp' && boxes === 0) {
      ftyp = await readWhole(reader, header, bytes, MAX_FTYP_BYTES);
      container = sniffContainer(ftyp);
      if (container === null) {
        throw new VideoProbeError('not_video', 'the file type box names no movie brand');
      }
      continue;
    }
    if (header.type === 'moof') throw fragmented();
    if (header.type === 'moov') {
      if (moov !== null) throw malformed('a second movie header (moov)');
      if ((header.sizeBytes ?? Number.POSITIVE_INFINITY) > limits.maxMetadataBytes) {
        throw new VideoProbeError(
          'too_large',
          `the movie header is larger than ${limits.maxMetadataBytes} bytes`,
        );
      }
      moov = await readWhole(reader, header, bytes, limits.maxMetadataBytes);
      moovAtFront = !mdatSeen;
      continue;
    }
    if (header.type === 'mdat') mdatSeen = true;
    // The size is known and the media data after 'moov' fits in it: nothing further changes the facts.
    if (header.type === 'mdat' && moov !== null && knownSizeBytes !== null) break;
    await skipPayload(reader, header, bytes.length);
  }
  if (container === null) throw new VideoProbeError('not_video', 'the file is empty');
  if (moov === null) throw new VideoProbeError('truncated', 'the file ends without a movie header (moov)');
  return { container, ftyp, moov, moovAtFront, sizeBytes: knownSizeBytes ?? reader.position };
}

/** The next header and its raw bytes; null at the end of the file. */
async function readHeader(
  reader: ByteReader,
  first: boolean,
): Promise<{ header: BoxHeader; bytes: Uint8Array } | null> {
  const start = await reader.take(SHORT_HEADER_BYTES);
  if (start.length === 0) return null;
  let bytes = start;
  let header = readBoxHeader(bytes, 0);
  if (header === 'short' && start.length === SHORT_HEADER_BYTES) {
    const rest = await reader.take(LONG_HEADER_BYTES - SHORT_HEADER_BYTES);
    bytes = new Uint8Array(start.length + rest.length);
    bytes.set(start);
    bytes.set(rest, start.length);
    header = readBoxHeader(bytes, 0);
  }
  if (header === 'invalid' || (first && header === 'short')) {
    throw first
      ? new VideoProbeError('not_video', 'the file does not begin with a box')
      : malformed(`no box header at byte ${reader.position - bytes.length}`);
  }
  if (header === 'short') throw new VideoProbeError('truncated', 'the file ends inside a box header');
  return { header, bytes };
}

function firstBoxContainer(header: BoxHeader): Container | null {
  if (header.type === 'ftyp') return null;
  if (QUICKTIME_FIRST_BOXES.has(header.type)) return 'mov';
  throw new VideoProbeError('not_video', `the file begins with a '${header.type}' box, not 'ftyp'`);
}

/** A box that cannot fit in the file or the limits is refused before anything is read of it. */
function checkFits(
  header: BoxHeader,
  start: number,
  limits: ProbeLimits,
  knownSizeBytes: number | null,
): void {
  if (header.sizeBytes === null) return;
  const end = start + header.sizeBytes;
  if (knownSizeBytes !== null && end > knownSizeBytes) {
    throw new VideoProbeError(
      'truncated',
      `a '${header.type}' box runs ${end - knownSizeBytes} bytes past the end`,
    );
  }
  if (end > limits.maxBytes) {
    throw new VideoProbeError('too_large', `a '${header.type}' box runs past ${limits.maxBytes} bytes`);
  }
}

async function readWhole(
  reader: ByteReader,
  header: BoxHeader,
  headerBytes: Uint8Array,
  maxBytes: number,
): Promise<Uint8Array> {
  if (header.sizeBytes === null || header.sizeBytes > maxBytes) {
    throw malformed(`a '${header.type}' box of ${header.sizeBytes ?? 'unbounded'} bytes`);
  }
  const box = new Uint8Array(header.sizeBytes);
  box.set(headerBytes);
  const payload = await reader.take(header.sizeBytes - headerBytes.length);
  if (payload.length < header.sizeBytes - headerBytes.length) {
    throw new VideoProbeError('truncated', `the file ends inside its '${header.type}' box`);
  }
  box.set(payload, headerBytes.length);
  return box;
}

async function skipPayload(reader: ByteReader, header: BoxHeader, headerBytes: number): Promise<void> {
  if (header.sizeBytes === null) {
    await reader.skip(Number.POSITIVE_INFINITY);
    return;
  }
  const remaining = header.sizeBytes - headerBytes;
  if ((await reader.skip(remaining)) < remaining) {
    throw new VideoProbeError('truncated', `the file ends inside its '${header.type}' box`);
  }
}

function malformed(detail: string): VideoProbeError {
  return new VideoProbeError('malformed', `malformed file: ${detail}`);
}

function fragmented(): VideoProbeError {
  return new VideoProbeError('fragmented', 'a fragmented MP4: its samples are in movie fragments (moof)');
}
