import { readFileSync } from 'node:fs';
import { videoFixture } from '@svc/testing';
import { describe, expect, it } from 'vitest';
import { sniffContainer } from '../src/index.ts';
import { ascii, box, concat, ftyp } from './boxes.ts';

// Callers tell a video from an image by its first bytes, before probing it.
describe('sniffContainer', () => {
  // Guarantee: the committed videos sniff as what they are, from their first 64 bytes.
  it('names the fixtures from their first bytes', () => {
    const first = (name: Parameters<typeof videoFixture>[0]) =>
      readFileSync(videoFixture(name)).subarray(0, 64);
    expect(sniffContainer(first('reel-h264-aac.mp4'))).toBe('mp4');
    expect(sniffContainer(first('mpeg4-part2.mp4'))).toBe('mp4');
    expect(sniffContainer(first('landscape-hevc.mov'))).toBe('mov');
    expect(sniffContainer(first('not-video.jpg'))).toBeNull();
  });

  // Guarantee: the brand decides: 'qt  ' is mov; an MP4 brand, major or compatible, is mp4.
  it('reads the major and compatible brands', () => {
    expect(sniffContainer(ftyp('qt  ', 'qt  '))).toBe('mov');
    expect(sniffContainer(ftyp('isom', 'isom', 'iso2', 'avc1', 'mp41'))).toBe('mp4');
    expect(sniffContainer(ftyp('mp42', 'mp42', 'isom'))).toBe('mp4');
    expect(sniffContainer(ftyp('iso6'))).toBe('mp4');
    expect(sniffContainer(ftyp('M4V ', 'M4V ', 'M4A ', 'mp42', 'isom'))).toBe('mp4');
    expect(sniffContainer(ftyp('XAVC', 'XAVC', 'mp42', 'iso2'))).toBe('mp4');
  });

  // Guarantee: ISO-BMFF images (HEIC, AVIF) are not videos, even when they also list an ISO brand.
  it('says null for HEIF and AVIF images', () => {
    expect(sniffContainer(ftyp('heic', 'mif1', 'heic'))).toBeNull();
    expect(sniffContainer(ftyp('avif', 'avif', 'mif1', 'miaf', 'iso8'))).toBeNull();
    expect(sniffContainer(ftyp('mif1', 'mif1', 'heic'))).toBeNull();
    expect(sniffContainer(ftyp('3gp4', '3gp4'))).toBeNull();
  });

  // Guarantee: a QuickTime file older than 'ftyp' is recognised by its first box; short or
  // foreign bytes are not a movie.
  it('recognises pre-ftyp QuickTime and refuses the rest', () => {
    expect(sniffContainer(box('wide'))).toBe('mov');
    expect(sniffContainer(concat(box('moov', box('mvhd', new Uint8Array(100)))))).toBe('mov');
    expect(sniffContainer(new Uint8Array([0xff, 0xd8, 0xff, 0xe0, 0, 0x10, 0x4a, 0x46]))).toBeNull();
    expect(sniffContainer(ascii('\x89PNG\r\n\x1a\n'))).toBeNull();
    expect(sniffContainer(ftyp('isom').subarray(0, 6))).toBeNull();
    expect(sniffContainer(new Uint8Array(0))).toBeNull();
  });
});
