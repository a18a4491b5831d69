import { z } from 'zod';
import { network, timestamp } from './shared.ts';

/** What a target is published as (issue 28): a feed post, a Reel or a Story. */
export const postFormat = z
  .enum(['feed', 'reel', 'story'])
  .describe('feed (a photo, carousel or Page post), reel or story');
export type PostFormat = z.infer<typeof postFormat>;

/** A Reel's settings as a post keeps them (the `reel` of a post). */
export const reelView = z.object({
  share_to_feed: z.boolean().describe("also show the Reel in the account's feed (Instagram)"),
  cover: z
    .union([z.object({ media: z.string() }), z.object({ offset_ms: z.number().int() })])
    .nullable()
    .describe('an image media item as the cover, or the frame at offset_ms'),
  collaborators: z.array(z.string()).describe('Instagram usernames invited as collaborators (at most 3)'),
  location: z.string().nullable().describe('a Facebook Page id that has a location'),
});
export type ReelView = z.infer<typeof reelView>;

/**
 * A post as partners see it (spec 2.3, 2.4), defined once: publishing builds it, the gateway
 * answers it as it is, and `post.*` events carry the same object as `data.post`.
 */
const postTargetView = z.object({
  account: z.string(),
  network,
  username: z.string(),
  format: postFormat,
  status: z.string().describe('pending or publishing while in flight, then published or failed'),
  platform_post_id: z.string().nullable(),
  permalink: z.string().nullable(),
  error: z.string().nullable().describe("the network provider's message when failed"),
  published_at: timestamp.nullable(),
  first_comment_error: z.string().nullable(),
  waiting_until: timestamp
    .nullable()
    .describe(
      'while the network throttles the account or is down: when publishing this target is tried again (the post stays publishing)',
    ),
});

/** What a post says of each of its media (the media record without its size and creation). */
export const postMediaView = z.object({
  id: z.string(),
  kind: z.string(),
  mime: z.string(),
  width: z.number(),
  height: z.number(),
  duration_ms: z.number().int().nullable().optional().describe('videos only'),
});

export const postView = z
  .object({
    id: z.string(),
    workspace: z.string(),
    external_ref: z.string().nullable(),
    caption: z.string(),
    title: z.string().nullable().describe("a Page video's title"),
    reel: reelView.nullable(),
    media: z.array(postMediaView),
    targets: z.array(postTargetView),
    schedule_at: timestamp.nullable(),
    status: z.string().describe('draft, scheduled, publishing, published, partial or failed'),
    published_at: timestamp.nullable(),
    attempts: z.number().int(),
    last_error: z.string().nullable().describe('per network, prefixed with the network name and a colon'),
    created_by: z.string().describe('where the post was made: api, widget or mcp'),
    created: timestamp,
    updated: timestamp,
    options: z.record(z.string(), z.unknown()),
  })
  .meta({ id: 'Post' });

export type PostView = z.infer<typeof postView>;
export type PostMediaView = z.infer<typeof postMediaView>;

/** `POST /v1/posts?dry_run=true`: every check passed, and what each target would receive. */
export const postDryRunView = z
  .object({
    dry_run: z.literal(true),
    workspace: z.string(),
    status: z.string().describe('the status the post would get'),
    schedule_at: timestamp.nullable(),
    targets: z.array(
      z.object({
        account: z.string(),
        network,
        username: z.string(),
        format: postFormat,
        would_send: z.object({
          kind: z.enum(['image', 'carousel', 'text', 'photo', 'multi_photo', 'reel', 'story', 'video']),
          caption: z.string(),
          media: z.array(z.string()),
          converted_to_jpeg: z.array(z.string()).describe('media converted to JPEG for the photo network'),
        }),
      }),
    ),
  })
  .meta({ id: 'PostDryRun' });

export type PostDryRunView = z.infer<typeof postDryRunView>;

/** The photo network's rolling 24-hour publishing limit of one account, as we count it. */
export const publishingLimitView = z
  .object({
    limit: z.number().int(),
    used: z.number().int(),
    remaining: z.number().int(),
    window_hours: z.number().int(),
    next_slot_at: timestamp.nullable().describe('when a slot frees up; null while one is free'),
  })
  .meta({ id: 'PublishingLimit' });

export type PublishingLimitView = z.infer<typeof publishingLimitView>;
