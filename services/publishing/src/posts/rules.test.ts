import { describe, expect, it } from 'vitest';
import { checkForNetwork } from './rules.ts';

const square = { id: 'med_1', kind: 'image', width: 1080, height: 1080, size: 1000, video: null };
const tall = { ...square, id: 'm2', width: 500, height: 1000 };

describe('checkForNetwork', () => {
  // Guarantee: text only is unsupported on the photo network and fine on a Page.
  it('refuses text only on photo_network', () => {
    expect(() => checkForNetwork('photo_network', 'feed', 'hi', [])).toThrow(
      expect.objectContaining({ code: 'unsupported' }),
    );
    expect(() => checkForNetwork('page_network', 'feed', 'hi', [])).not.toThrow();
  });

  // Guarantee: caption, hashtag, mention, carousel and aspect-ratio limits name the field to fix.
  it('names the field of each limit', () => {
    const field = (fn: () => void) => {
      try {
        fn();
      } catch (error) {
        return (error as { field?: string }).field;
      }
      return 'accepted';
    };
    expect(field(() => checkForNetwork('photo_network', 'feed', 'x'.repeat(2201), [square]))).toBe('caption');
    expect(field(() => checkForNetwork('photo_network', 'feed', '#a '.repeat(31), [square]))).toBe('caption');
    expect(field(() => checkForNetwork('photo_network', 'feed', '@a '.repeat(21), [square]))).toBe('caption');
    expect(field(() => checkForNetwork('photo_network', 'feed', 'x', Array(11).fill(square)))).toBe('media');
    expect(field(() => checkForNetwork('photo_network', 'feed', 'x', [square, tall]))).toBe('media.1');
    expect(field(() => checkForNetwork('page_network', 'feed', 'x', [tall]))).toBe('accepted');
  });
});
