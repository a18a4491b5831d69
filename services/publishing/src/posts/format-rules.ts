import type { Network, PostFormat } from '@svc/contracts/public';
import { errors } from '@svc/errors';
import type { KnownVideo } from '../media/known-media.ts';

/**
 * What each network takes as a feed post, a Reel or a Story (facts §2.2, §2.6, §3; issue 28),
 * checked from the media's real facts before anything is sent. A refusal names the limit with its
 * number, the media item by id, and the field (`media.<index>`) to fix.
 */

/** A media item of a post as the rules see it. */
export interface MediaFacts {
  id: string;
  kind: string;
  width: number;
  height: number;
  size: number;
  /** What the video really is, read from its bytes at upload; null for an image. */
  video: KnownVideo | null;
}

interface VideoLimits {
  minMs: number;
  maxMs: number;
  maxBytes: number;
  fps: { min: number; max: number } | null;
  maxWidth: number | null;
  minSize: { width: number; height: number } | null;
  aspect: { min: number; max: number } | null;
  /** Video codecs accepted; null when the network converts what it gets. */
  codecs: string[] | null;
  /** Instagram's container rules: `moov` before the media data and no edit list (facts §2.6). */
  streamable: boolean;
  /** The highest audio sample rate, when the network limits it (AAC only then). */
  audioMaxHz: number | null;
}

const MB = 1024 * 1024;
const MINUTE_MS = 60_000;

/** Instagram's video rules (facts §2.6), the same for every format but duration and size. */
const INSTAGRAM_VIDEO = {
  fps: { min: 23, max: 60 },
  maxWidth: 1920,
  minSize: null,
  aspect: { min: 0.01, max: 10 },
  codecs: ['h264', 'hevc'],
  streamable: true,
  audioMaxHz: 48_000,
};

/**
 * Facebook Reels and video Stories [O: Meta's Reels publishing guide]: 9:16 at 540×960 or more,
 * 24–60 fps. Page videos are converted by Facebook and only bounded in length and size.
 */
const FACEBOOK_VERTICAL = {
  fps: { min: 24, max: 60 },
  maxWidth: null,
  minSize: { width: 540, height: 960 },
  aspect: { min: 0.55, max: 0.57 },
  codecs: ['h264', 'hevc'],
  streamable: false,
  audioMaxHz: null,
};

const VIDEO_LIMITS: Record<Network, Record<PostFormat, VideoLimits>> = {
  photo_network: {
    // Carousel video items: a Reel's limits.
    feed: { ...INSTAGRAM_VIDEO, minMs: 3_000, maxMs: 15 * MINUTE_MS, maxBytes: 300 * MB },
    reel: { ...INSTAGRAM_VIDEO, minMs: 3_000, maxMs: 15 * MINUTE_MS, maxBytes: 300 * MB },
    story: { ...INSTAGRAM_VIDEO, minMs: 3_000, maxMs: MINUTE_MS, maxBytes: 100 * MB },
  },
  page_network: {
    feed: {
      minMs: 1_000,
      maxMs: 240 * MINUTE_MS,
      maxBytes: 10 * 1024 * MB,
      fps: null,
      maxWidth: null,
      minSize: null,
      aspect: null,
      codecs: null,
      streamable: false,
      audioMaxHz: null,
    },
    reel: { ...FACEBOOK_VERTICAL, minMs: 3_000, maxMs: 90_000, maxBytes: 1024 * MB },
    story: { ...FACEBOOK_VERTICAL, minMs: 3_000, maxMs: MINUTE_MS, maxBytes: 1024 * MB },
  },
};

const FORMAT_NAME: Record<PostFormat, string> = { feed: 'a feed post', reel: 'a Reel', story: 'a Story' };

/** Throws the refusal of the first media rule this target's format breaks, or returns. */
export function checkFormatMedia(network: Network, format: PostFormat, media: MediaFacts[]): void {
  const videos = media.filter((m) => m.kind === 'video');
  const where = `${FORMAT_NAME[format]} on ${network}`;
  if (format === 'reel' && (media.length !== 1 || videos.length !== 1))
    throw errors.validation('media', `${where} takes exactly one video (this post has ${describe(media)})`);
  if (format === 'story' && media.length !== 1)
    throw errors.validation(
      'media',
      `${where} takes exactly one image or video (this post has ${describe(media)})`,
    );
  if (format === 'feed') checkFeedMix(network, media, videos.length);
  media.forEach((item, index) => {
    if (item.kind === 'video') checkVideo(VIDEO_LIMITS[network][format], where, item, index);
  });
}

/** Which mixes of images and videos a feed post may carry on each network. */
function checkFeedMix(network: Network, media: MediaFacts[], videos: number): void {
  if (videos === 0) return;
  if (network === 'photo_network' && media.length === 1)
    throw errors.validation(
      'format',
      `photo_network publishes a single video as a Reel: give this target the format reel (media ${media[0]?.id})`,
    );
  if (network === 'page_network' && media.length > 1)
    throw errors.validation(
      'media',
      `a Page post carries photos or one video, not both or several videos (this post has ${describe(media)})`,
    );
}

function describe(media: MediaFacts[]): string {
  const videos = media.filter((m) => m.kind === 'video').length;
  return `${media.length - videos} image${media.length - videos === 1 ? '' : 's'} and ${videos} video${videos === 1 ? '' : 's'}`;
}

/** A limit a video breaks: the limit with its number, and what the video is instead. */
interface Broken {
  limit: string;
  actual: string;
}

const seconds = (ms: number) => `${(ms / 1000).toFixed(ms % 1000 === 0 ? 0 : 1)} s`;

/** Each limit of a video in the order they are refused; null when the video keeps it. */
const VIDEO_CHECKS: ((limits: VideoLimits, item: MediaFacts, facts: KnownVideo) => Broken | null)[] = [
  ({ minMs, maxMs }, _, { durationMs }) =>
    durationMs < minMs || durationMs > maxMs
      ? { limit: `videos of ${seconds(minMs)} to ${seconds(maxMs)}`, actual: `lasts ${seconds(durationMs)}` }
      : null,
  ({ maxBytes }, { size }) =>
    size > maxBytes
      ? {
          limit: `videos of at most ${Math.round(maxBytes / MB)} MB`,
          actual: `is ${(size / MB).toFixed(1)} MB`,
        }
      : null,
  ({ codecs }, _, { videoCodec }) =>
    codecs && !codecs.includes(videoCodec)
      ? { limit: `${codecs.map((c) => c.toUpperCase()).join(' or ')} video`, actual: `is ${videoCodec}` }
      : null,
  ({ fps }, _, { frameRate }) =>
    fps && (frameRate < fps.min || frameRate > fps.max)
      ? { limit: `${fps.min} to ${fps.max} frames per second`, actual: `has ${frameRate}` }
      : null,
  ({ maxWidth }, { width, height }) =>
    maxWidth && width > maxWidth
      ? { limit: `videos at most ${maxWidth} px wide`, actual: `is ${width}×${height}` }
      : null,
  ({ minSize }, { width, height }) =>
    minSize && (width < minSize.width || height < minSize.height)
      ? { limit: `videos of at least ${minSize.width}×${minSize.height} px`, actual: `is ${width}×${height}` }
      : null,
  ({ aspect }, { width, height }) =>
    aspect && (width / height < aspect.min || width / height > aspect.max)
      ? {
          limit: `a width/height ratio between ${aspect.min} and ${aspect.max}`,
          actual: `is ${width}×${height} (${(width / height).toFixed(2)})`,
        }
      : null,
  ({ audioMaxHz }, _, { audioCodec }) =>
    audioMaxHz !== null && audioCodec !== null && audioCodec !== 'aac'
      ? { limit: 'AAC audio', actual: `has ${audioCodec} audio` }
      : null,
  ({ audioMaxHz }, _, { audioCodec, audioSampleRateHz }) =>
    audioMaxHz !== null && audioCodec !== null && (audioSampleRateHz ?? 0) > audioMaxHz
      ? {
          limit: `audio sampled at ${audioMaxHz / 1000} kHz at most`,
          actual: `is sampled at ${(audioSampleRateHz ?? 0) / 1000} kHz`,
        }
      : null,
  ({ streamable }, _, { moovAtFront }) =>
    streamable && !moovAtFront
      ? {
          limit: 'files with their index (moov) before the media data (export with "fast start")',
          actual: 'has it at the end',
        }
      : null,
  ({ streamable }, _, { hasEditList }) =>
    streamable && hasEditList ? { limit: 'files without an edit list', actual: 'has one' } : null,
];

/** One video against the limits of its network and format; the first limit broken is refused. */
function checkVideo(limits: VideoLimits, where: string, item: MediaFacts, index: number): void {
  const refuse = ({ limit, actual }: Broken) =>
    errors.validation(`media.${index}`, `${where} takes ${limit}; media ${item.id} ${actual}`);
  if (!item.video)
    throw refuse({ limit: 'a video whose facts are known', actual: 'was not read as a video' });
  for (const check of VIDEO_CHECKS) {
    const broken = check(limits, item, item.video);
    if (broken) throw refuse(broken);
  }
}
