import { ByteReader, tooSlow } from './byte-reader.ts';
import { readLayout } from './file-layout.ts';
import { DEFAULT_LIMITS, type ProbeLimits } from './limits.ts';
import { parseMovie } from './movie.ts';
import { checkMovieHeader } from './movie-header-check.ts';
import { VideoProbeError } from './probe-error.ts';
import { type VideoFacts, videoFacts } from './video-facts.ts';

/** The whole file, or its chunks as they arrive (a Node stream, a web ReadableStream, a generator). */
export type VideoSource = Uint8Array | AsyncIterable<Uint8Array>;

export type ProbeOptions = Partial<ProbeLimits> & {
  /**
   * The file's size when it is known before reading a streamed source (an upload's declared
   * length): the probe then stops after the movie header instead of reading to the end.
   */
  sizeBytes?: number;
};

/**
 * Reads what a video file really is from its bytes: container, codecs, size, duration, frame
 * rate, and the two layout facts Meta checks (the movie header first, no edit list). The file
 * is read front to back once, keeping only the file type and movie header boxes; media data is
 * skipped. Every failure rejects with one VideoProbeError, whose `reason` says why.
 */
export async function probeVideo(source: VideoSource, options: ProbeOptions = {}): Promise<VideoFacts> {
  const limits = resolveLimits(options);
  const deadlineAt = Date.now() + limits.timeoutMs;
  const knownSizeBytes = source instanceof Uint8Array ? source.length : (options.sizeBytes ?? null);
  if (knownSizeBytes !== null && knownSizeBytes > limits.maxBytes) {
    throw new VideoProbeError('too_large', `the file is larger than ${limits.maxBytes} bytes`);
  }
  const chunks = source instanceof Uint8Array ? [source].values() : source[Symbol.asyncIterator]();
  const reader = new ByteReader(toAsync(chunks), { maxBytes: limits.maxBytes, deadlineAt, now: Date.now });
  try {
    const layout = await readLayout(reader, limits, knownSizeBytes);
    // Parsing cannot be interrupted, so the bound is checked before it; its cost is bounded
    // by maxMetadataBytes and maxSamples instead.
    if (Date.now() >= deadlineAt) throw tooSlow();
    checkMovieHeader(layout.moov, limits);
    return videoFacts(layout, parseMovie(layout));
  } catch (error) {
    throw error instanceof VideoProbeError
      ? error
      : new VideoProbeError('malformed', 'malformed file: it could not be read', { cause: error });
  } finally {
    reader.release();
  }
}

function resolveLimits(options: ProbeOptions): ProbeLimits {
  const limits = { ...DEFAULT_LIMITS };
  for (const key of Object.keys(DEFAULT_LIMITS) as (keyof ProbeLimits)[]) {
    const value = options[key];
    if (value === undefined) continue;
    if (!(value > 0)) throw new RangeError(`probe limit ${key} must be a positive number, not ${value}`);
    limits[key] = value;
  }
  return limits;
}

function toAsync(chunks: Iterator<Uint8Array> | AsyncIterator<Uint8Array>): AsyncIterator<Uint8Array> {
  return {
    next: async () => chunks.next(),
    return: async () => chunks.return?.() ?? { done: true, value: undefined },
  };
}
