import path from 'node:path';

/**
 * The test videos in `dev/testing/fixtures/video`, made once with ffmpeg and committed (tests
 * never run ffmpeg). Its README says how each was made and what it is.
 */
const VIDEO_FIXTURES = [
  'reel-h264-aac.mp4',
  'moov-at-end.mp4',
  'story-short.mp4',
  'story-h264.mp4',
  'landscape-hevc.mov',
  'low-fps.mp4',
  'mpeg4-part2.mp4',
  'edit-list.mp4',
  'edit-list-trim.mp4',
  'rotated.mp4',
  'fragmented.mp4',
  'not-video.jpg',
] as const;

export type VideoFixture = (typeof VIDEO_FIXTURES)[number];

/** The absolute path of a test video. */
export function videoFixture(name: VideoFixture): string {
  return path.resolve(import.meta.dirname, '../fixtures/video', name);
}
