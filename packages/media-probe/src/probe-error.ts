/**
 * Why a file could not be probed. The caller turns these into its own answer (a validation error
 * for the partner, mostly); the bytes came from an end user, so none of them is our fault.
 */
export const PROBE_FAILURES = [
  /** Not an ISO-BMFF or QuickTime file at all: a JPEG, a HEIC photo, random bytes. */
  'not_video',
  /** A movie with no video track (audio only, or only metadata). */
  'no_video_track',
  /** The bytes end before the movie header ('moov') or before a box they declare. */
  'truncated',
  /** Bigger than the caller allows, or declaring a box that would be. */
  'too_large',
  /** Not done within the time bound (a stalled or endless stream). */
  'too_slow',
  /** Fragmented MP4 ('moof' boxes, as from a browser's MediaRecorder): its samples are not in 'moov'. */
  'fragmented',
  /** A box structure that contradicts itself, or more boxes, tracks or samples than the bounds allow. */
  'malformed',
] as const;

export type ProbeFailure = (typeof PROBE_FAILURES)[number];

/** The one error `probeVideo` rejects with, whatever went wrong underneath (kept as `cause`). */
export class VideoProbeError extends Error {
  override name = 'VideoProbeError';

  constructor(
    readonly reason: ProbeFailure,
    message: string,
    options: { cause?: unknown } = {},
  ) {
    super(message, options);
  }
}
