import { describe, expect, it } from 'vitest';
import type { TrackSummary } from '../src/movie.ts';
import { changesPlayback } from '../src/video-facts.ts';

// Meta refuses edit lists; ffmpeg writes a one-edit list into nearly every file to skip the
// encoder's delay. Only lists that change what plays may count as edit lists.
const MOVIE_TIMESCALE = 1000;

function track(edits: TrackSummary['edits'], timescale = 15_360, durationSeconds = 4): TrackSummary {
  return {
    id: 1,
    handler: 'vide',
    codec: 'avc1',
    objectType: null,
    timescale,
    duration: durationSeconds * timescale,
    samples: 120,
    width: 0,
    height: 0,
    matrix: [],
    codedWidth: 0,
    codedHeight: 0,
    sampleRateHz: 0,
    edits,
  };
}

describe('changesPlayback', () => {
  // Guarantee: no list, and an encoder's shift (B-frame delay, AAC priming), are not edit lists.
  it('lets an encoder delay pass', () => {
    expect(changesPlayback(track([]), MOVIE_TIMESCALE)).toBe(false);
    expect(
      changesPlayback(track([{ segmentDuration: 4000, mediaTime: 1024, rate: 1 }]), MOVIE_TIMESCALE),
    ).toBe(false);
    const audio = track([{ segmentDuration: 4000, mediaTime: 1024, rate: 1 }], 44_100, 4.023);
    expect(changesPlayback(audio, MOVIE_TIMESCALE)).toBe(false);
  });

  // Guarantee: a late start (empty edit), several edits, another speed, or a trim at either end is one.
  it('catches edits that change what plays', () => {
    const empty = { segmentDuration: 1000, mediaTime: -1, rate: 1 };
    const all = { segmentDuration: 4000, mediaTime: 0, rate: 1 };
    expect(changesPlayback(track([empty, all]), MOVIE_TIMESCALE)).toBe(true);
    expect(changesPlayback(track([all, all]), MOVIE_TIMESCALE)).toBe(true);
    expect(changesPlayback(track([{ ...all, rate: 2 }]), MOVIE_TIMESCALE)).toBe(true);
    expect(changesPlayback(track([{ segmentDuration: 2500, mediaTime: 1.5 * 15_360, rate: 1 }]), 1000)).toBe(
      true,
    );
    expect(changesPlayback(track([{ segmentDuration: 2000, mediaTime: 0, rate: 1 }]), MOVIE_TIMESCALE)).toBe(
      true,
    );
  });
});
