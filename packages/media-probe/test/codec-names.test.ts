import { describe, expect, it } from 'vitest';
import { audioCodecName, videoCodecName } from '../src/codec-names.ts';

// Publishing compares these names with what Meta accepts, so each must be the codec's, whatever
// variant of sample entry carries it.
describe('codec names', () => {
  // Guarantee: every sample entry of a codec gives the codec's one name.
  it('names video codecs from their sample entries', () => {
    expect(videoCodecName('avc1.64001f', null)).toBe('h264');
    expect(videoCodecName('avc3.640028', null)).toBe('h264');
    expect(videoCodecName('hvc1.1.6.L93.90', null)).toBe('hevc');
    expect(videoCodecName('hev1.2.4.L120.B0', null)).toBe('hevc');
    expect(videoCodecName('vp09.00.10.08', null)).toBe('vp9');
    expect(videoCodecName('av01.0.04M.08', null)).toBe('av1');
    expect(videoCodecName('apcn', null)).toBe('prores');
  });

  // Guarantee: 'mp4v' is named by its object type (part 2 versus MPEG-2), never passed as H.264.
  it('names mp4v by its object type', () => {
    expect(videoCodecName('mp4v', 0x20)).toBe('mpeg4');
    expect(videoCodecName('mp4v', 0x61)).toBe('mpeg2');
    expect(videoCodecName('mp4v', null)).toBe('mp4v');
    expect(videoCodecName('mp4v', 0x99)).toBe('mp4v');
  });

  // Guarantee: AAC and MP3 in 'mp4a' are told apart by object type; other entries by their code.
  it('names audio codecs', () => {
    expect(audioCodecName('mp4a.40.2', 0x40)).toBe('aac');
    expect(audioCodecName('mp4a.67', 0x67)).toBe('aac');
    expect(audioCodecName('mp4a.6b', 0x6b)).toBe('mp3');
    expect(audioCodecName('.mp3', null)).toBe('mp3');
    expect(audioCodecName('Opus', null)).toBe('opus');
    expect(audioCodecName('ec-3', null)).toBe('eac3');
    expect(audioCodecName('sowt', null)).toBe('pcm');
  });

  // Guarantee: an unknown code comes back as itself, so a refusal can name it.
  it('returns unknown codes as they are', () => {
    expect(videoCodecName('xyz1.2', null)).toBe('xyz1');
    expect(audioCodecName('Wxyz', null)).toBe('wxyz');
  });
});
