import { z } from 'zod';
import { timestamp } from './shared.ts';

/** What a video is, read from its bytes at upload: what the networks' Reel and Story rules check. */
const mediaVideoFacts = z.object({
  video_codec: z.string().describe('h264, hevc, mpeg4, vp9, av1...'),
  audio_codec: z.string().nullable().describe('aac, mp3, opus...; null when the video has no sound'),
  audio_sample_rate_hz: z.number().int().nullable(),
  frame_rate: z.number().describe('frames per second'),
  bit_rate: z.number().int().describe('bits per second over the whole file'),
  moov_at_front: z
    .boolean()
    .describe('the index (moov) comes before the media data, so the file plays before it has fully arrived'),
  has_edit_list: z.boolean().describe('an edit list changes what plays (a trim, a late start)'),
});

/** A media record as partners see it (spec 2.5): what publishing builds and the gateway answers. */
export const mediaView = z
  .object({
    id: z.string(),
    workspace: z.string(),
    kind: z.string().describe('image or video'),
    mime: z
      .string()
      .describe('detected from the bytes: image/jpeg, image/png, image/webp, video/mp4 or video/quicktime'),
    width: z.number().int().describe('pixels, as shown (the photo orientation or video rotation applied)'),
    height: z.number().int().describe('pixels, as shown'),
    duration_ms: z.number().int().nullable().describe("a video's length; null for an image"),
    size: z.number().int().describe('bytes'),
    thumbnail_url: z
      .string()
      .nullable()
      .describe(
        'a poster frame of a video; null for now: making one needs a video decoder, which the service does not run',
      ),
    video: mediaVideoFacts.nullable().describe('null for an image'),
    created: timestamp,
  })
  .meta({ id: 'Media' });

export type MediaView = z.infer<typeof mediaView>;
