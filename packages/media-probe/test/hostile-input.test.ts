import { readFileSync } from 'node:fs';
import { videoFixture } from '@svc/testing';
import { describe, expect, it } from 'vitest';
import {
  type ProbeFailure,
  type ProbeOptions,
  probeVideo,
  VideoProbeError,
  type VideoSource,
} from '../src/index.ts';
import { ascii, box, boxStart, concat, ftyp, largeHeader, patched } from './boxes.ts';
import { chunked, endless, stalled } from './sources.ts';

// The bytes come from end users: whatever they are, the probe answers with facts or one
// VideoProbeError whose reason says why, within its bounds on size, time, boxes and samples.
const reel = readFileSync(videoFixture('reel-h264-aac.mp4'));
const moovAtEnd = readFileSync(videoFixture('moov-at-end.mp4'));

async function failure(source: VideoSource, options?: ProbeOptions): Promise<VideoProbeError> {
  const error = await probeVideo(source, options).then(
    () => undefined,
    (rejected: unknown) => rejected,
  );
  if (!(error instanceof VideoProbeError))
    throw new Error(`expected a VideoProbeError, got ${String(error)}`);
  return error;
}

async function reasonFor(source: VideoSource, options?: ProbeOptions): Promise<ProbeFailure> {
  return (await failure(source, options)).reason;
}

describe('not a video', () => {
  // Guarantee: what is not an ISO-BMFF or QuickTime movie is told apart as not_video, including
  // an ISO-BMFF image (HEIC), an empty file, and random bytes.
  it('refuses a JPEG, a HEIC, random bytes and an empty file as not_video', async () => {
    const heic = concat(ftyp('heic', 'mif1', 'heic'), box('meta', new Uint8Array(4)));
    const random = Uint8Array.from({ length: 4096 }, (_, i) => (i * 7919 + 13) % 251);
    expect(await reasonFor(readFileSync(videoFixture('not-video.jpg')))).toBe('not_video');
    expect(await reasonFor(heic)).toBe('not_video');
    expect(await reasonFor(random)).toBe('not_video');
    expect(await reasonFor(new Uint8Array(0))).toBe('not_video');
    expect(await reasonFor(ascii('<html><body>hello</body></html>'))).toBe('not_video');
  });

  // Guarantee: a movie with no video track (audio only) is no_video_track, not a video of 0x0.
  it('refuses a movie without a video track as no_video_track', async () => {
    const hdlr = boxStart(reel, 'hdlr');
    const audioOnly = patched(reel, 'hdlr', 12, new DataView(ascii('text').buffer).getUint32(0));
    expect(reel.subarray(hdlr + 16, hdlr + 20).toString()).toBe('vide');
    expect(await reasonFor(audioOnly)).toBe('no_video_track');
  });

  // Guarantee: a fragmented MP4 is named as such rather than probed wrong (its moov has no samples).
  it('refuses a fragmented MP4 as fragmented', async () => {
    expect(await reasonFor(readFileSync(videoFixture('fragmented.mp4')))).toBe('fragmented');
  });
});

describe('cut files', () => {
  // Guarantee: a file cut anywhere before its movie header is complete is truncated, whole or
  // streamed, and so is one whose media data is cut after a movie header at the front.
  it('calls a file cut inside moov, before a trailing moov, inside a header or inside mdat truncated', async () => {
    const moovStart = boxStart(reel, 'moov');
    expect(await reasonFor(reel.subarray(0, moovStart + 2000))).toBe('truncated');
    expect(await reasonFor(chunked(reel.subarray(0, moovStart + 2000), 512))).toBe('truncated');
    expect(await reasonFor(reel.subarray(0, moovStart + 4))).toBe('truncated');
    expect(await reasonFor(moovAtEnd.subarray(0, boxStart(moovAtEnd, 'moov')))).toBe('truncated');
    expect(await reasonFor(chunked(moovAtEnd.subarray(0, 30_000), 4096))).toBe('truncated');
    expect(await reasonFor(reel.subarray(0, reel.length - 100))).toBe('truncated');
    expect(await reasonFor(chunked(reel.subarray(0, reel.length - 100), 4096))).toBe('truncated');
  });

  // Guarantee: a source that fails midway (an aborted upload) is truncated, with the failure as cause.
  it('calls a failing source truncated and keeps its error', async () => {
    async function* aborted() {
      yield reel.subarray(0, 100);
      throw new Error('connection reset');
    }
    const error = await failure(aborted());
    expect(error.reason).toBe('truncated');
    expect(error.cause).toMatchObject({ message: 'connection reset' });
  });
});

describe('bounds', () => {
  // Guarantee: a box declaring a size beyond the file is truncated when the size is known, and
  // too_large when streamed (the probe will not read 1 PB to find out); beyond 2^53 is malformed.
  it('answers a huge declared box size without reading it', async () => {
    const huge = concat(ftyp('isom', 'isom'), largeHeader('mdat', 2n ** 50n), new Uint8Array(64));
    expect(await reasonFor(huge)).toBe('truncated');
    expect(await reasonFor(chunked(huge, 16))).toBe('too_large');
    expect(await reasonFor(concat(ftyp('isom'), largeHeader('mdat', 2n ** 63n)))).toBe('malformed');
    const hugeMoov = concat(ftyp('isom'), largeHeader('moov', 100_000_000n));
    expect(await reasonFor(chunked(hugeMoov, 16))).toBe('too_large');
  });

  // Guarantee: no more than maxBytes is read, whether the size is declared up front or not.
  it('refuses files over maxBytes, declared or streamed', async () => {
    expect(await reasonFor(reel, { maxBytes: 10_000 })).toBe('too_large');
    expect(await reasonFor(chunked(reel, 1000), { sizeBytes: reel.length, maxBytes: 10_000 })).toBe(
      'too_large',
    );
    const mdatToTheEnd = concat(ftyp('isom'), new Uint8Array([0, 0, 0, 0]), ascii('mdat'));
    expect(await reasonFor(endless(mdatToTheEnd, 64 * 1024), { maxBytes: 1_000_000 })).toBe('too_large');
  });

  // Guarantee: a stalled upload is given up at the time bound, not waited on forever.
  it('gives up a stream that stops arriving as too_slow', async () => {
    const startedAt = Date.now();
    expect(await reasonFor(stalled(reel.subarray(0, 100)), { timeoutMs: 200 })).toBe('too_slow');
    expect(Date.now() - startedAt).toBeLessThan(1000);
  });

  // Guarantee: a movie header whose tables claim more entries than it holds is malformed, and one
  // claiming more samples than allowed is too_large, before mp4box builds anything from them.
  it('refuses lying sample tables before parsing them', async () => {
    expect(await reasonFor(patched(reel, 'stts', 8, 0xffff_ffff))).toBe('malformed');
    expect(await reasonFor(patched(reel, 'stsz', 12, 50_000_000))).toBe('malformed');
    const oneSizeForAll = patched(patched(reel, 'stsz', 8, 100), 'stsz', 12, 4_000_000_000);
    expect(await reasonFor(oneSizeForAll)).toBe('too_large');
    expect(await reasonFor(reel, { maxSamples: 200 })).toBe('too_large');
  });

  // Guarantee: the bounds on tracks and boxes hold.
  it('refuses more tracks or boxes than allowed as malformed', async () => {
    expect(await reasonFor(reel, { maxTracks: 1 })).toBe('malformed');
    expect(await reasonFor(reel, { maxBoxes: 10 })).toBe('malformed');
  });

  // Guarantee: whatever a mutated file holds, the probe answers facts or a VideoProbeError, each
  // in well under the time bound (mp4box throws TypeErrors and RangeErrors on such input).
  it('answers 300 mutated files with facts or a VideoProbeError, quickly', async () => {
    const fixtures = ['reel-h264-aac.mp4', 'landscape-hevc.mov', 'mpeg4-part2.mp4', 'edit-list.mp4'] as const;
    const files = fixtures.map((name) => readFileSync(videoFixture(name)));
    let seed = 42;
    const random = () => {
      seed = (seed * 1_103_515_245 + 12_345) % 2 ** 31;
      return seed / 2 ** 31;
    };
    const outcomes = new Set<string>();
    let slowestMs = 0;
    for (let i = 0; i < 300; i++) {
      const bytes = Uint8Array.from(files[i % files.length] ?? reel);
      const view = new DataView(bytes.buffer);
      for (let k = 0; k < 4; k++) {
        const at = Math.floor(random() * Math.min(bytes.length - 4, 8192));
        view.setUint32(at, random() < 0.5 ? 0xffff_ffff : Math.floor(random() * 2 ** 32));
      }
      const startedAt = performance.now();
      const outcome = await probeVideo(bytes).then(
        () => 'facts',
        (error: unknown) => (error instanceof VideoProbeError ? error.reason : `unexpected ${String(error)}`),
      );
      slowestMs = Math.max(slowestMs, performance.now() - startedAt);
      outcomes.add(outcome);
    }
    expect([...outcomes].filter((outcome) => outcome.startsWith('unexpected'))).toEqual([]);
    expect(outcomes).toContain('malformed');
    expect(slowestMs).toBeLessThan(1000);
  });
});

describe('QuickTime without ftyp', () => {
  // Guarantee: a QuickTime file older than the 'ftyp' box (first box 'moov' or 'wide') is still a mov.
  it('reads a QuickTime file that begins with its moov', async () => {
    const mov = readFileSync(videoFixture('landscape-hevc.mov'));
    const withoutFtyp = mov.subarray(boxStart(mov, 'moov'));
    const probed = await probeVideo(withoutFtyp);
    expect(probed).toMatchObject({ container: 'mov', videoCodec: 'hevc', audioCodec: 'aac', width: 640 });
    expect(probed.sizeBytes).toBe(withoutFtyp.length);
  });
});
