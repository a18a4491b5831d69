/** Bounds on the work one probe may do; the bytes come from end users. */
export type ProbeLimits = {
  /** Refuse files larger than this (Meta takes Reels up to 1 GB; we keep uploads smaller). */
  maxBytes: number;
  /** Reject when the file has not arrived and been read within this time. */
  timeoutMs: number;
  /**
   * The largest movie header ('moov') read into memory and parsed. Its sample tables grow with
   * the duration: an hour at 60 frames per second with audio needs about 2 MB.
   */
  maxMetadataBytes: number;
  /** At most this many top-level boxes, and this many boxes in the movie header's track tree. */
  maxBoxes: number;
  maxTracks: number;
  /** At most this many samples (video frames, audio packets) in all tracks together. */
  maxSamples: number;
};

export const DEFAULT_LIMITS: ProbeLimits = {
  maxBytes: 300 * 1024 * 1024,
  timeoutMs: 2_000,
  maxMetadataBytes: 8 * 1024 * 1024,
  maxBoxes: 10_000,
  maxTracks: 16,
  maxSamples: 1_000_000,
};
