import { createReadStream, readFileSync } from 'node:fs';
import { type VideoFixture, videoFixture } from '@svc/testing';
import { describe, expect, it } from 'vitest';
import { probeVideo, type VideoFacts } from '../src/index.ts';
import { chunked } from './sources.ts';

// What each committed fixture is, as dev/testing/fixtures/video/README.md says ffmpeg made it.
const EXPECTED: [VideoFixture, VideoFacts][] = [
  [
    'reel-h264-aac.mp4',
    facts({ width: 540, height: 960, durationMs: 4000, bitRate: 74370, sizeBytes: 37185 }),
  ],
  [
    'moov-at-end.mp4',
    facts({
      width: 540,
      height: 960,
      durationMs: 4000,
      bitRate: 74370,
      sizeBytes: 37185,
      moovAtFront: false,
    }),
  ],
  ['story-short.mp4', facts({ durationMs: 2000, bitRate: 70692, sizeBytes: 17673 })],
  [
    'story-h264.mp4',
    facts({ audioCodec: null, audioSampleRateHz: null, durationMs: 5000, bitRate: 22210, sizeBytes: 13881 }),
  ],
  [
    'landscape-hevc.mov',
    facts({
      container: 'mov',
      videoCodec: 'hevc',
      audioSampleRateHz: 48_000,
      width: 640,
      height: 360,
      durationMs: 3520,
      frameRate: 25,
      bitRate: 70620,
      sizeBytes: 31073,
    }),
  ],
  ['low-fps.mp4', facts({ audioSampleRateHz: 48_000, frameRate: 15, bitRate: 55110, sizeBytes: 27555 })],
  [
    'mpeg4-part2.mp4',
    facts({ videoCodec: 'mpeg4', width: 180, height: 320, bitRate: 137378, sizeBytes: 68689 }),
  ],
  ['edit-list.mp4', facts({ bitRate: 53488, sizeBytes: 26744, hasEditList: true })],
  [
    'edit-list-trim.mp4',
    facts({
      width: 540,
      height: 960,
      durationMs: 2500,
      bitRate: 118992,
      sizeBytes: 37185,
      hasEditList: true,
    }),
  ],
  [
    'rotated.mp4',
    facts({ audioCodec: null, audioSampleRateHz: null, durationMs: 3000, bitRate: 39779, sizeBytes: 14917 }),
  ],
];

/** A 360x640 H.264 + AAC 44.1 kHz MP4 of 4 s at 30 fps, moov first, no edit list; and the changes. */
function facts(changes: Partial<VideoFacts>): VideoFacts {
  return {
    container: 'mp4',
    videoCodec: 'h264',
    audioCodec: 'aac',
    audioSampleRateHz: 44_100,
    width: 360,
    height: 640,
    durationMs: 4000,
    frameRate: 30,
    bitRate: 0,
    sizeBytes: 0,
    moovAtFront: true,
    hasEditList: false,
    ...changes,
  };
}

describe('probeVideo facts', () => {
  // Guarantee: every field is read right for each kind of file the publishing checks meet:
  // codecs, QuickTime, display size (rotation included), frame rate, moov position, edit lists.
  it.each(EXPECTED)('reads %s', async (name, expected) => {
    expect(await probeVideo(readFileSync(videoFixture(name)))).toEqual(expected);
  });

  // Guarantee: a streamed file gives the same facts as the whole file, whatever its chunks
  // (a header or a box split across them), and whether 'moov' comes before or after the media.
  it.each(['reel-h264-aac.mp4', 'moov-at-end.mp4', 'landscape-hevc.mov'] as const)(
    'reads %s the same from a stream in small chunks',
    async (name) => {
      const whole = await probeVideo(readFileSync(videoFixture(name)));
      expect(await probeVideo(createReadStream(videoFixture(name), { highWaterMark: 1000 }))).toEqual(whole);
      expect(await probeVideo(chunked(readFileSync(videoFixture(name)), 7))).toEqual(whole);
    },
  );

  // Guarantee: with the size known up front, the probe stops pulling after 'moov' and lets go of
  // the source (an upload is not read to its end just to learn its size).
  it('stops reading after moov when the size is known, and releases the source', async () => {
    const bytes = readFileSync(videoFixture('reel-h264-aac.mp4'));
    let pulledBytes = 0;
    let released = false;
    async function* source() {
      try {
        for (let at = 0; at < bytes.length; at += 1024) {
          pulledBytes += Math.min(1024, bytes.length - at);
          yield bytes.subarray(at, at + 1024);
        }
      } finally {
        released = true;
      }
    }
    const probed = await probeVideo(source(), { sizeBytes: bytes.length });
    expect(probed).toEqual(EXPECTED[0]?.[1]);
    expect(pulledBytes).toBeLessThan(8 * 1024);
    expect(released).toBe(true);
  });
});
