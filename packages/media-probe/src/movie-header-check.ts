import { readBoxHeader } from './box-header.ts';
import type { ProbeLimits } from './limits.ts';
import { VideoProbeError } from './probe-error.ts';

/**
 * mp4box trusts the counts in a movie header: a 20-byte 'stsz' claiming four billion samples of
 * one size makes it build four billion objects, and an 'sgpd' claiming as many empty entries
 * loops without reading. So before mp4box sees a 'moov', this walks its track tree (headers
 * only) and checks each table's count against the bytes it has and the bounds on boxes, tracks
 * and samples. mp4box reads past a box's end only into the same buffer, so every other loop of
 * its is bounded by the movie header's size.
 */
export function checkMovieHeader(moov: Uint8Array, limits: ProbeLimits): void {
  const walk: Walk = { limits, boxes: 0, tracks: 0, samples: 0 };
  const header = readBoxHeader(moov, 0);
  if (typeof header === 'string') throw malformed('no movie header');
  walkChildren(moov, header.headerBytes, moov.length, 0, walk);
}

type Walk = { limits: ProbeLimits; boxes: number; tracks: number; samples: number };

/** The boxes of the track tree that hold only boxes, down to the sample tables. */
const CONTAINERS = new Set(['moov', 'trak', 'mdia', 'minf', 'stbl', 'edts', 'dinf']);
const MAX_DEPTH = 8;

/**
 * Tables whose payload (after version and flags) holds an entry count at `countAt` bytes, each
 * entry taking at least `entryBytes` (ISO/IEC 14496-12, by box).
 */
const TABLES: Record<
  string,
  { countAt: (version: number) => number; entryBytes: (version: number) => number }
> = {
  stsd: { countAt: () => 0, entryBytes: () => 8 },
  dref: { countAt: () => 0, entryBytes: () => 8 },
  stts: { countAt: () => 0, entryBytes: () => 8 },
  ctts: { countAt: () => 0, entryBytes: () => 8 },
  stsc: { countAt: () => 0, entryBytes: () => 12 },
  stco: { countAt: () => 0, entryBytes: () => 4 },
  co64: { countAt: () => 0, entryBytes: () => 8 },
  stss: { countAt: () => 0, entryBytes: () => 4 },
  stps: { countAt: () => 0, entryBytes: () => 4 },
  elst: { countAt: () => 0, entryBytes: (v) => (v === 1 ? 20 : 12) },
  subs: { countAt: () => 0, entryBytes: () => 6 },
  sbgp: { countAt: (v) => (v === 1 ? 8 : 4), entryBytes: () => 8 },
  // Entries of an unknown grouping type can be empty; one byte each still bounds the loop.
  sgpd: { countAt: (v) => (v === 0 ? 4 : 8), entryBytes: () => 1 },
};

function walkChildren(bytes: Uint8Array, start: number, end: number, depth: number, walk: Walk): void {
  if (depth > MAX_DEPTH) throw malformed('boxes nested too deep');
  const inside = bytes.subarray(0, end);
  for (let at = start; at < end; ) {
    const header = readBoxHeader(inside, at);
    if (header === 'short' && inside.subarray(at).every((byte) => byte === 0)) return; // QuickTime's zero terminator
    if (typeof header === 'string') throw malformed(`no box header at byte ${at} of the movie header`);
    const size = header.sizeBytes ?? end - at;
    if (at + size > end) throw malformed(`a '${header.type}' box runs past its container`);
    countBox(header.type, walk);
    if (CONTAINERS.has(header.type)) walkChildren(bytes, at + header.headerBytes, at + size, depth + 1, walk);
    else checkTable(header.type, bytes.subarray(at + header.headerBytes, at + size), walk);
    at += size;
  }
}

function countBox(type: string, walk: Walk): void {
  const { maxBoxes, maxTracks } = walk.limits;
  if (++walk.boxes > maxBoxes) throw malformed(`more than ${maxBoxes} boxes in the movie header`);
  if (type === 'trak' && ++walk.tracks > maxTracks) throw malformed(`more than ${maxTracks} tracks`);
  if (type === 'mvex') {
    throw new VideoProbeError('fragmented', 'a fragmented MP4: its samples are in movie fragments (moof)');
  }
}

function checkTable(type: string, payload: Uint8Array, walk: Walk): void {
  if (type === 'stsz' || type === 'stz2') {
    checkSampleSizes(type, payload, walk);
    return;
  }
  const table = TABLES[type];
  if (table === undefined) return;
  const view = new DataView(payload.buffer, payload.byteOffset, payload.length);
  const version = payload.length > 0 ? view.getUint8(0) : 0;
  const countAt = 4 + table.countAt(version);
  if (payload.length < countAt + 4) throw malformed(`a '${type}' box too short for its entry count`);
  const count = view.getUint32(countAt);
  const room = payload.length - countAt - 4;
  if (count * table.entryBytes(version) > room) {
    throw malformed(`a '${type}' box counts ${count} entries in ${room} bytes`);
  }
}

/** 'stsz': sample size, then count (sizes follow when the size is 0); 'stz2': field bits, then count. */
function checkSampleSizes(type: 'stsz' | 'stz2', payload: Uint8Array, walk: Walk): void {
  if (payload.length < 12) throw malformed(`a '${type}' box too short for its sample count`);
  const view = new DataView(payload.buffer, payload.byteOffset, payload.length);
  const count = view.getUint32(8);
  const entryBits = type === 'stsz' ? (view.getUint32(4) === 0 ? 32 : 0) : view.getUint8(7);
  if (Math.ceil((count * entryBits) / 8) > payload.length - 12) {
    throw malformed(`a '${type}' box counts ${count} samples in ${payload.length - 12} bytes`);
  }
  walk.samples += count;
  const { maxSamples } = walk.limits;
  if (walk.samples > maxSamples) {
    throw new VideoProbeError('too_large', `more than ${maxSamples} samples (frames and audio packets)`);
  }
}

function malformed(detail: string): VideoProbeError {
  return new VideoProbeError('malformed', `malformed movie header: ${detail}`);
}
