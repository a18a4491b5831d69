import { newId } from '@svc/ids';
import { describe, expect, it } from 'vitest';
import { mediaUrl, signMediaToken, verifyMediaToken } from './signed-url.ts';

const config = {
  PUBLIC_BASE_URL: 'https://api.example.com/',
  MEDIA_URL_SECRET: 'test-secret-0123456789',
  MEDIA_URL_TTL_SECONDS: 600,
};
const now = new Date('2026-11-22T10:00:00.250Z');
const id = newId('media');

describe('signed media URLs', () => {
  // Guarantee: a URL signed now verifies for at least its TTL (to the next whole minute after it),
  // for the media and variant it names, and not after.
  it('round-trips until expiry', () => {
    const url = mediaUrl(config, id, 'jpeg', now);
    expect(url.startsWith('https://api.example.com/media-files/')).toBe(true);
    const token = url.split('/').pop() as string;
    const expiresAt = new Date('2026-11-22T10:11:00Z');
    expect(verifyMediaToken(config, token, now)).toEqual({ mediaId: id, variant: 'jpeg', expiresAt });
    expect(verifyMediaToken(config, token, new Date(now.getTime() + 600_000))).not.toBeNull();
    expect(verifyMediaToken(config, token, new Date(expiresAt.getTime() - 1))).not.toBeNull();
    expect(verifyMediaToken(config, token, expiresAt)).toBeNull();
  });

  // Guarantee: the URLs of one media and variant made within the same minute are one URL (what
  // lets the gateway read a file once for the networks fetching it together); the next minute's differs.
  it('gives one URL per media, variant and minute', () => {
    const later = new Date(now.getTime() + 30_000);
    expect(mediaUrl(config, id, 'original', later)).toBe(mediaUrl(config, id, 'original', now));
    expect(mediaUrl(config, id, 'jpeg', now)).not.toBe(mediaUrl(config, id, 'original', now));
    expect(mediaUrl(config, id, 'original', new Date(now.getTime() + 60_000))).not.toBe(
      mediaUrl(config, id, 'original', now),
    );
  });

  // Guarantee: any altered part, another secret, or a token for another media fails verification.
  it('refuses forged and altered tokens', () => {
    const token = signMediaToken(config, id, 'original', now);
    const [mediaId, variant, expires, mac] = token.split('.') as [string, string, string, string];
    const other = newId('media');
    const forged = [
      `${other}.${variant}.${expires}.${mac}`,
      `${mediaId}.jpeg.${expires}.${mac}`,
      `${mediaId}.${variant}.${(Number.parseInt(expires, 36) + 3600).toString(36)}.${mac}`,
      `${mediaId}.${variant}.${expires}.${mac.slice(0, -1)}${mac.endsWith('A') ? 'B' : 'A'}`,
      signMediaToken({ ...config, MEDIA_URL_SECRET: 'another-secret-xxxxxxxx' }, id, 'original', now),
      `${token}x`,
      '',
      '../../etc/passwd',
    ];
    for (const candidate of forged) expect(verifyMediaToken(config, candidate, now), candidate).toBeNull();
  });
});
