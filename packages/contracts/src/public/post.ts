import { z } from 'zod';
import { network, timestamp } from './shared.ts';

/**
 * A post as partners see it (spec 2.3, 2.4), defined once: publishing builds it, the gateway
 * answers it as it is, and `post.*` events carry the same object as `data.post`.
 */
const postTargetView = z.object({
  account: z.string(),
  network,
  username: z.string(),
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
});

export const postView = z
  .object({
    id: z.string(),
    workspace: z.string(),
    external_ref: z.string().nullable(),
    caption: z.string(),
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
        would_send: z.object({
          kind: z.enum(['image', 'carousel', 'text', 'photo', 'multi_photo']),
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
