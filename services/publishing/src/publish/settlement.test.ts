import { describe, expect, it } from 'vitest';
import { derivePostOutcome, lastErrorOf } from './settlement.ts';

describe('derivePostOutcome', () => {
  // Guarantee: the post outcome follows spec 3: all published, some, none; nothing while a target is in flight.
  it('derives published, partial, failed, or nothing yet', () => {
    const t = (...statuses: string[]) => statuses.map((status) => ({ status }));
    expect(derivePostOutcome(t('published', 'published'))).toBe('published');
    expect(derivePostOutcome(t('published', 'failed'))).toBe('partial');
    expect(derivePostOutcome(t('failed', 'failed'))).toBe('failed');
    expect(derivePostOutcome(t('published', 'pending'))).toBeNull();
    expect(derivePostOutcome(t('publishing'))).toBeNull();
  });
});

describe('lastErrorOf', () => {
  // Guarantee: last_error names each failed network as a prefix with its provider message.
  it('prefixes each failure with its network', () => {
    expect(
      lastErrorOf([
        { status: 'failed', network: 'photo_network', error: 'Media ID is not available' },
        { status: 'published', network: 'page_network', error: null },
      ]),
    ).toBe('photo_network: Media ID is not available');
    expect(lastErrorOf([{ status: 'published', network: 'page_network', error: null }])).toBeNull();
  });
});
