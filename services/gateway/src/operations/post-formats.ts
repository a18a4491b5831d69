import { postFormat } from '@svc/contracts/public';
import { z } from 'zod';
import { idField } from '../http/schemas.ts';

// What a post says of its formats (issue 28): targets with their own format, the post's format,
// Reel settings and a Page video's title, and how publishing takes them.

/** A target: an account id, or `{ account, format }` to publish it in its own format. */
const target = z.union([
  idField('account', 'account'),
  z.strictObject({ account: idField('account', 'account'), format: postFormat.optional() }),
]);
export const targets = z.array(target).min(1).max(10);

/** Instagram usernames: letters, digits, dots and underscores, at most 30. */
const username = z.string().regex(/^[A-Za-z0-9._]{1,30}$/, 'an Instagram username');
export const reelSettings = z
  .strictObject({
    share_to_feed: z.boolean().default(true).describe('also show the Reel in the feed (Instagram)'),
    cover: z
      .union([
        z.strictObject({ media: idField('media', 'media').describe('an image media item') }),
        z.strictObject({
          offset_ms: z
            .number()
            .int()
            .min(0)
            .max(15 * 60_000),
        }),
      ])
      .optional()
      .describe('the cover: an image media item, or the frame at offset_ms'),
    collaborators: z.array(username).max(3).default([]).describe('Instagram usernames, at most 3'),
    location: z
      .string()
      .regex(/^\d{1,32}$/, 'a Facebook Page id')
      .optional()
      .describe('a Facebook Page id that has a location'),
  })
  .describe("the settings of the post's Reel targets");

export const format = postFormat
  .optional()
  .describe('what targets that name no format are published as: feed (default), reel or story');
export const title = z.string().max(255).describe("a Page video's title (Page video posts only)");

/** The request's targets as publishing takes them: the account ids, and beside them each one's format. */
export function targetsOf(given: z.infer<typeof targets>) {
  return {
    accountIds: given.map((t) => (typeof t === 'string' ? t : t.account)),
    targetFormats: given.map((t) => (typeof t === 'string' ? '' : (t.format ?? ''))),
  };
}

/** The Reel settings as publishing keeps them: every key present. */
export function reelJson(reel: z.infer<typeof reelSettings>) {
  return JSON.stringify({ ...reel, cover: reel.cover ?? null, location: reel.location ?? null });
}
