import { describe, expect, it } from 'vitest';
import { checkFormatMedia, type MediaFacts } from './format-rules.ts';
import { checkForNetwork } from './rules.ts';

const MB = 1024 * 1024;
/** A Reel Instagram takes: 9:16, 30 fps, H.264 with AAC at 44.1 kHz, streamable, 10 s. */
const reel: MediaFacts = {
  id: 'med_reel',
  kind: 'video',
  width: 1080,
  height: 1920,
  size: 20 * MB,
  video: {
    durationMs: 10_000,
    frameRate: 30,
    bitRate: 16_000_000,
    videoCodec: 'h264',
    audioCodec: 'aac',
    audioSampleRateHz: 44_100,
    moovAtFront: true,
    hasEditList: false,
  },
};
const image: MediaFacts = { id: 'med_img', kind: 'image', width: 1080, height: 1080, size: MB, video: null };
const withVideo = (
  facts: Partial<NonNullable<MediaFacts['video']>>,
  item: Partial<MediaFacts> = {},
): MediaFacts => ({
  ...reel,
  ...item,
  video: { ...(reel.video as NonNullable<MediaFacts['video']>), ...facts },
});

/** The refusal a check throws: its field and message, or 'accepted'. */
function refusal(check: () => void): { field?: string; message: string } | 'accepted' {
  try {
    check();
    return 'accepted';
  } catch (error) {
    const { field, message } = error as { field?: string; message: string };
    return { field, message };
  }
}

describe('format rules (issue 28)', () => {
  // Guarantee: what each network takes as a Reel, a Story and a feed post is accepted.
  it('accepts a Reel, Stories and a mixed carousel where the networks take them', () => {
    expect(refusal(() => checkFormatMedia('photo_network', 'reel', [reel]))).toBe('accepted');
    expect(refusal(() => checkFormatMedia('photo_network', 'story', [image]))).toBe('accepted');
    expect(
      refusal(() => checkFormatMedia('photo_network', 'story', [withVideo({ durationMs: 15_000 })])),
    ).toBe('accepted');
    expect(refusal(() => checkFormatMedia('photo_network', 'feed', [image, reel]))).toBe('accepted');
    expect(refusal(() => checkFormatMedia('page_network', 'feed', [reel]))).toBe('accepted');
    expect(refusal(() => checkFormatMedia('page_network', 'reel', [reel]))).toBe('accepted');
    expect(refusal(() => checkFormatMedia('page_network', 'story', [image]))).toBe('accepted');
  });

  // Guarantee: each Instagram video limit is refused before sending, naming the limit's number,
  // the media item by id and its index as the field.
  it.each([
    ['too short', withVideo({ durationMs: 2_000 }), /3 s to 900 s.*med_reel lasts 2 s/],
    ['too long', withVideo({ durationMs: 16 * 60_000 }), /3 s to 900 s.*lasts 960 s/],
    ['an unsupported codec', withVideo({ videoCodec: 'mpeg4' }), /H264 or HEVC video.*is mpeg4/],
    ['too few frames', withVideo({ frameRate: 15 }), /23 to 60 frames per second.*has 15/],
    ['too wide', withVideo({}, { width: 2560, height: 1440 }), /at most 1920 px wide.*2560×1440/],
    ['not AAC audio', withVideo({ audioCodec: 'mp3' }), /AAC audio.*mp3/],
    ['audio over 48 kHz', withVideo({ audioSampleRateHz: 96_000 }), /48 kHz at most.*96 kHz/],
    ['moov at the end', withVideo({ moovAtFront: false }), /index \(moov\) before the media data/],
    ['an edit list', withVideo({ hasEditList: true }), /without an edit list.*has one/],
    ['over 300 MB', withVideo({}, { size: 301 * MB }), /at most 300 MB.*301\.0 MB/],
  ])('refuses a Reel with %s', (_, video, message) => {
    const found = refusal(() => checkFormatMedia('photo_network', 'reel', [video]));
    expect(found).toMatchObject({ field: 'media.0', message: expect.stringMatching(message) });
  });

  // Guarantee: a Story video lasts 3–60 s, and the item is named by its place in a carousel too.
  it('refuses a long Story video and names a carousel item by index', () => {
    expect(
      refusal(() => checkFormatMedia('photo_network', 'story', [withVideo({ durationMs: 61_000 })])),
    ).toMatchObject({
      field: 'media.0',
      message: expect.stringMatching(/3 s to 60 s/),
    });
    expect(
      refusal(() => checkFormatMedia('photo_network', 'feed', [image, withVideo({ frameRate: 10 })])),
    ).toMatchObject({
      field: 'media.1',
    });
  });

  // Guarantee: the shape of each format (how many items, which kinds) is refused with its numbers.
  it('refuses what a format cannot carry', () => {
    expect(refusal(() => checkFormatMedia('photo_network', 'reel', [image]))).toMatchObject({
      field: 'media',
      message: expect.stringMatching(/exactly one video \(this post has 1 image and 0 videos\)/),
    });
    expect(refusal(() => checkFormatMedia('photo_network', 'story', [image, image]))).toMatchObject({
      field: 'media',
    });
    expect(refusal(() => checkFormatMedia('photo_network', 'feed', [reel]))).toMatchObject({
      field: 'format',
      message: expect.stringMatching(/as a Reel/),
    });
    expect(refusal(() => checkFormatMedia('page_network', 'feed', [image, reel]))).toMatchObject({
      field: 'media',
    });
    expect(
      refusal(() => checkFormatMedia('page_network', 'reel', [withVideo({ durationMs: 120_000 })])),
    ).toMatchObject({
      message: expect.stringMatching(/3 s to 90 s/),
    });
    expect(
      refusal(() => checkFormatMedia('page_network', 'reel', [withVideo({}, { width: 1920, height: 1080 })])),
    ).toMatchObject({
      message: expect.stringMatching(/ratio between 0.55 and 0.57/),
    });
  });

  // Guarantee: a Story's caption is not sent, so its length is not held against it; a Reel or Story without media is refused.
  it('checks captions where they are sent and refuses formats without media', () => {
    expect(refusal(() => checkForNetwork('photo_network', 'story', 'x'.repeat(3000), [image]))).toBe(
      'accepted',
    );
    expect(refusal(() => checkForNetwork('photo_network', 'reel', 'x'.repeat(3000), [reel]))).toMatchObject({
      field: 'caption',
    });
    expect(refusal(() => checkForNetwork('page_network', 'reel', 'hi', []))).toMatchObject({
      message: expect.stringMatching(/a reel without media/),
    });
  });
});
