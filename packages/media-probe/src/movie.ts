import { AudioSampleEntry, ISOFile, MP4BoxBuffer, VisualSampleEntry } from 'mp4box';
import type { FileLayout } from './file-layout.ts';
import { VideoProbeError } from './probe-error.ts';

/** One track as its boxes describe it; times are in the track's own timescale. */
export type TrackSummary = {
  id: number;
  /** The handler ('vide', 'soun'), which says what the track is even when its codec is unknown. */
  handler: string;
  /** mp4box's codec string: the sample entry's code, then its parameters ('avc1.64001f'). */
  codec: string;
  /** The MPEG-4 object type of an 'mp4v' or 'mp4a' entry's decoder configuration. */
  objectType: number | null;
  timescale: number;
  duration: number;
  samples: number;
  /** The track header's size (16.16 fixed point already divided out) and matrix. */
  width: number;
  height: number;
  matrix: number[];
  /** The sample entry's coded size (video) and rate (audio); 0 when it has none. */
  codedWidth: number;
  codedHeight: number;
  sampleRateHz: number;
  edits: { segmentDuration: number; mediaTime: number; rate: number }[];
};

export type MovieSummary = { timescale: number; duration: number; tracks: TrackSummary[] };

type Trak = ISOFile['moov']['traks'][number];

/**
 * The movie header as mp4box's box parser reads it. mp4box gets only the file type and movie
 * header boxes, one after the other, never the media data. Its box tree is read here rather
 * than its `getInfo()`, which first builds an object per sample: a second for each million.
 * A QuickTime file older than 'ftyp' gets one saying 'qt  ', which also makes mp4box read
 * QuickTime's sound descriptions.
 */
export function parseMovie(layout: FileLayout): MovieSummary {
  const ftyp = layout.ftyp ?? QUICKTIME_FTYP;
  const bytes = new Uint8Array(ftyp.length + layout.moov.length);
  bytes.set(ftyp);
  bytes.set(layout.moov, ftyp.length);
  const problems: string[] = [];
  try {
    return quietly(problems, () => {
      // Not `new ISOFile(stream)`: that parses before the stream knows its file, whose brand
      // decides how QuickTime sound descriptions are read. Not `appendBuffer`: that builds the
      // sample lists.
      const file = new ISOFile();
      file.onError = (module, message) => problems.push(`${module}: ${message}`);
      const buffer = MP4BoxBuffer.fromArrayBuffer(bytes.buffer, 0);
      buffer.usedBytes = 0;
      file.stream.insertBuffer(buffer);
      file.parse();
      // Typed as always there; absent when the movie header could not be parsed.
      const moov = file.moov as ISOFile['moov'] | undefined;
      if (moov === undefined) throw new Error(problems.join('; ') || 'no movie header parsed');
      return {
        timescale: moov.mvhd.timescale,
        duration: moov.mvhd.duration,
        tracks: moov.traks.map(summarize),
      };
    });
  } catch (cause) {
    throw new VideoProbeError('malformed', 'malformed movie header: mp4box could not read it', { cause });
  }
}

/** Throws a TypeError when a box the track needs is missing (the caller calls that malformed). */
function summarize(trak: Trak): TrackSummary {
  const { tkhd, mdia } = trak;
  const { stsd, stsz, stz2 } = mdia.minf.stbl;
  const entry = stsd.entries[0];
  return {
    id: tkhd.track_id,
    handler: mdia.hdlr.handler,
    codec: entry?.getCodec() ?? '',
    objectType: objectType(entry),
    timescale: mdia.mdhd.timescale,
    duration: mdia.mdhd.duration,
    samples: stsz?.sample_count ?? stz2?.sample_sizes.length ?? 0,
    width: tkhd.width / 65536,
    height: tkhd.height / 65536,
    matrix: Array.from(tkhd.matrix),
    codedWidth: entry instanceof VisualSampleEntry ? entry.width : 0,
    codedHeight: entry instanceof VisualSampleEntry ? entry.height : 0,
    sampleRateHz: entry instanceof AudioSampleEntry ? entry.getSampleRate() : 0,
    edits: (trak.edts?.elst?.entries ?? []).map((edit) => ({
      segmentDuration: edit.segment_duration,
      mediaTime: edit.media_time,
      rate: edit.media_rate_integer + edit.media_rate_fraction / 65536,
    })),
  };
}

/** mp4box's codec string leaves it out for 'mp4v'; it is in the entry's 'esds' (QuickTime: in 'wave'). */
function objectType(entry: unknown): number | null {
  if (typeof entry !== 'object' || entry === null) return null;
  const { esds, wave } = entry as { esds?: EsdsLike; wave?: { esds?: EsdsLike } };
  const value = (esds ?? wave?.esds)?.esd?.getOTI?.();
  return typeof value === 'number' ? value : null;
}

type EsdsLike = { esd?: { getOTI?: () => unknown } };

/** An 'ftyp' of 20 bytes: major brand 'qt  ', minor version 0, compatible 'qt  '. */
const QUICKTIME_FTYP = new Uint8Array([
  0,
  0,
  0,
  20,
  ...ascii('ftyp'),
  ...ascii('qt  '),
  0,
  0,
  0,
  0,
  ...ascii('qt  '),
]);

function ascii(text: string): number[] {
  return Array.from(text, (char) => char.charCodeAt(0));
}

/**
 * Runs `work` with mp4box's console errors kept in `problems` instead of printed: it logs what
 * it finds wrong in a box straight to the console, and the bytes are anyone's. The work is
 * synchronous, so no other code runs while the console is borrowed.
 */
function quietly<T>(problems: string[], work: () => T): T {
  const { error } = console;
  console.error = (...parts: unknown[]) => {
    problems.push(parts.map(String).join(' '));
  };
  try {
    return work();
  } finally {
    console.error = error;
  }
}
