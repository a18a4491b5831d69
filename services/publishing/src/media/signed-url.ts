import { createHmac, timingSafeEqual } from 'node:crypto';
import type { PublishingConfig } from '../config.ts';

/**
 * Signed, expiring media URLs: the networks fetch media by URL, so each file is served by the
 * gateway at `/media-files/<token>` where the token names the media, the variant and the expiry,
 * with an HMAC-SHA256 over them keyed by MEDIA_URL_SECRET. Nothing is stored: the token is
 * verified by recomputing the MAC, and a forged, altered or expired token simply finds nothing.
 *
 * Token: `<media id>.<variant>.<expiry, unix seconds, base36>.<MAC, base64url>`.
 *
 * The expiry is the TTL from now rounded up to the minute, so the URLs of one media made within
 * the same minute are the same URL: a post to several accounts has each network fetch one URL,
 * and the gateway reads the file once for the fetches that arrive together (media-file-reads.ts).
 */
export const MEDIA_VARIANTS = ['original', 'jpeg'] as const;
export type MediaVariant = (typeof MEDIA_VARIANTS)[number];

type UrlConfig = Pick<PublishingConfig, 'PUBLIC_BASE_URL' | 'MEDIA_URL_SECRET' | 'MEDIA_URL_TTL_SECONDS'>;

export interface VerifiedToken {
  mediaId: string;
  variant: MediaVariant;
  expiresAt: Date;
}

/** Expiries are whole minutes: every URL of a media and variant made within a minute is the same. */
const EXPIRY_STEP_S = 60;

const TOKEN_PATTERN = /^(med_[0-9A-Za-z]{25})\.([a-z]+)\.([0-9a-z]{1,10})\.([A-Za-z0-9_-]{43})$/;

export function mediaUrl(
  config: UrlConfig,
  mediaId: string,
  variant: MediaVariant,
  now: Date = new Date(),
): string {
  return `${config.PUBLIC_BASE_URL.replace(/\/$/, '')}/media-files/${signMediaToken(config, mediaId, variant, now)}`;
}

export function signMediaToken(config: UrlConfig, mediaId: string, variant: MediaVariant, now: Date): string {
  const expires =
    Math.ceil((now.getTime() / 1000 + config.MEDIA_URL_TTL_SECONDS) / EXPIRY_STEP_S) * EXPIRY_STEP_S;
  const payload = `${mediaId}.${variant}.${expires.toString(36)}`;
  return `${payload}.${mac(config.MEDIA_URL_SECRET, payload)}`;
}

/** The media and variant a token grants until its expiry, or null when forged, altered or expired. */
export function verifyMediaToken(
  config: UrlConfig,
  token: string,
  now: Date = new Date(),
): VerifiedToken | null {
  const match = TOKEN_PATTERN.exec(token);
  if (!match) return null;
  const [, mediaId = '', variant = '', expiresText = '', signature = ''] = match;
  const expected = Buffer.from(mac(config.MEDIA_URL_SECRET, `${mediaId}.${variant}.${expiresText}`));
  const given = Buffer.from(signature);
  if (expected.length !== given.length || !timingSafeEqual(expected, given)) return null;
  if (!(MEDIA_VARIANTS as readonly string[]).includes(variant)) return null;
  const expiresAt = new Date(Number.parseInt(expiresText, 36) * 1000);
  if (expiresAt.getTime() <= now.getTime()) return null;
  return { mediaId, variant: variant as MediaVariant, expiresAt };
}

function mac(secret: string, payload: string): string {
  return createHmac('sha256', secret).update(`media-url:v1:${payload}`).digest('base64url');
}
