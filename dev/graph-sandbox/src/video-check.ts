import { probeVideo, type VideoFacts, VideoProbeError } from '@svc/media-probe';

/**
 * What Meta checks when it processes a video (facts §2.6 for Instagram), read from the real bytes
 * with @svc/media-probe. A file that breaks a rule does not fail the upload call: processing ends
 * in an error later (see processing.ts), so the caller only learns the reason here for its logs.
 */
export interface VideoRules {
  codecs: readonly string[] | null;
  minFrameRate: number;
  maxFrameRate: number;
  maxWidth: number | null;
  /** Width over height. */
  aspect: { min: number; max: number } | null;
  minDurationMs: number;
  maxDurationMs: number;
  maxBytes: number;
  /** AAC at 48 kHz at most, when there is audio. */
  aacAudio: boolean;
  /** The movie header first and no edit list (Meta streams the file while it processes it). */
  streamable: boolean;
}

const MB = 1024 * 1024;
/** The sandbox's bound on one uploaded or fetched video (Meta's Reels limit, facts §2.6), kept in memory. */
export const MAX_UPLOAD_BYTES = 300 * MB;

/** Instagram Reels (facts §2.6); carousel videos too, which the facts give no rules of their own [O]. */
export const REEL_RULES: VideoRules = {
  codecs: ['h264', 'hevc'],
  minFrameRate: 23,
  maxFrameRate: 60,
  maxWidth: 1920,
  aspect: { min: 0.01, max: 10 },
  minDurationMs: 3_000,
  maxDurationMs: 15 * 60_000,
  maxBytes: MAX_UPLOAD_BYTES,
  aacAudio: true,
  streamable: true,
};

/** Instagram story videos: the Reels rules, 3–60 s and 100 MB (facts §2.6). */
export const STORY_RULES: VideoRules = { ...REEL_RULES, maxDurationMs: 60_000, maxBytes: 100 * MB };

/**
 * Facebook Page Reels and video stories [O: Meta's Reels and Stories publishing guides, not in the
 * facts]: 3–90 s (stories 60 s), 24–60 fps. The sandbox keeps its 300 MB bound on every upload.
 */
export const PAGE_REEL_RULES: VideoRules = {
  codecs: ['h264', 'hevc', 'vp9', 'av1'],
  minFrameRate: 24,
  maxFrameRate: 60,
  maxWidth: null,
  aspect: null,
  minDurationMs: 3_000,
  maxDurationMs: 90_000,
  maxBytes: MAX_UPLOAD_BYTES,
  aacAudio: false,
  streamable: false,
};
export const PAGE_STORY_RULES: VideoRules = { ...PAGE_REEL_RULES, maxDurationMs: 60_000 };

/** Page feed videos (`/videos`): any readable video; Facebook takes long and large files. */
export const PAGE_VIDEO_RULES: VideoRules = {
  ...PAGE_REEL_RULES,
  codecs: null,
  minFrameRate: 0,
  maxFrameRate: Number.POSITIVE_INFINITY,
  minDurationMs: 1,
  maxDurationMs: Number.POSITIVE_INFINITY,
};

/** The first rule the video breaks, in words, or null when Meta would take it. */
function videoProblem(facts: VideoFacts, rules: VideoRules): string | null {
  const checks: [boolean, string][] = [
    [rules.codecs !== null && !rules.codecs.includes(facts.videoCodec), `video codec ${facts.videoCodec}`],
    [facts.frameRate < rules.minFrameRate || facts.frameRate > rules.maxFrameRate, `${facts.frameRate} fps`],
    [rules.maxWidth !== null && facts.width > rules.maxWidth, `${facts.width} px wide`],
    [rules.aspect !== null && !within(facts.width / facts.height, rules.aspect), 'aspect ratio'],
    [
      facts.durationMs < rules.minDurationMs || facts.durationMs > rules.maxDurationMs,
      `${facts.durationMs} ms long`,
    ],
    [facts.sizeBytes > rules.maxBytes, `${facts.sizeBytes} bytes`],
    [
      rules.aacAudio && facts.audioCodec !== null && facts.audioCodec !== 'aac',
      `audio codec ${facts.audioCodec}`,
    ],
    [rules.aacAudio && (facts.audioSampleRateHz ?? 0) > 48_000, `audio at ${facts.audioSampleRateHz} Hz`],
    [rules.streamable && !facts.moovAtFront, 'movie header (moov) after the media data'],
    [rules.streamable && facts.hasEditList, 'an edit list'],
  ];
  return checks.find(([broken]) => broken)?.[1] ?? null;
}

function within(value: number, range: { min: number; max: number }): boolean {
  return value >= range.min && value <= range.max;
}

export type VideoVerdict = { ok: true; facts: VideoFacts } | { ok: false; reason: string };

/** Probes the file and applies the rules; a file that is no readable movie is refused too. */
export async function checkVideo(data: Uint8Array, rules: VideoRules): Promise<VideoVerdict> {
  if (data.length > rules.maxBytes) return { ok: false, reason: `more than ${rules.maxBytes} bytes` };
  let facts: VideoFacts;
  try {
    facts = await probeVideo(data, { maxBytes: rules.maxBytes });
  } catch (error) {
    if (error instanceof VideoProbeError) return { ok: false, reason: `${error.reason}: ${error.message}` };
    throw error;
  }
  const problem = videoProblem(facts, rules);
  return problem === null ? { ok: true, facts } : { ok: false, reason: problem };
}
