import { createHash } from 'node:crypto';
import { errors } from '@svc/errors';
import { probeVideo, sniffContainer, type VideoFacts, VideoProbeError } from '@svc/media-probe';
import type { PublishingConfig } from '../config.ts';
import { detectMedia, hasImageSignature } from './detect.ts';
import { displayedSize } from './displayed-size.ts';
import type { MediaFiles } from './media-files.ts';

type IntakeConfig = Pick<
  PublishingConfig,
  'MEDIA_MAX_BYTES' | 'MEDIA_MAX_PIXELS' | 'MEDIA_VIDEO_MAX_BYTES' | 'MEDIA_PROBE_TIMEOUT_MS'
>;

/** Where a refusal points: the uploaded file, or the file fetched from `url`. */
export type IntakeField = 'file' | 'url';

/** What a complete file is, as its media row records it. */
interface DetectedMedia {
  kind: 'image' | 'video';
  mime: string;
  width: number;
  height: number;
  sha256: string;
  durationMs: number | null;
  frameRate: number | null;
  videoCodec: string | null;
  audioCodec: string | null;
  audioSampleRateHz: number | null;
  bitRate: number | null;
  moovAtFront: boolean | null;
  hasEditList: boolean | null;
}

/**
 * Enough of the start of a file to tell an image from a movie (a movie's first box is tiny), and
 * to name what else it is (an SVG may open with a kilobyte of comments).
 */
const HEAD_BYTES = 4096;

const NO_VIDEO_FACTS = {
  durationMs: null,
  frameRate: null,
  videoCodec: null,
  audioCodec: null,
  audioSampleRateHz: null,
  bitRate: null,
  moovAtFront: null,
  hasEditList: null,
};

/**
 * What a staged file really is, from its bytes alone: the image detector first (an image is an
 * image whatever it was called, held to the image rules), then the movie containers (MP4, MOV),
 * whose structure the video probe reads from storage as a stream (bounded in bytes, time and
 * metadata), never holding the file. Anything else is refused, naming what it is. A refusal is
 * a `validation_error` on `field`; deleting the refused file is the caller's.
 */
export class MediaIntake {
  constructor(
    private readonly files: MediaFiles,
    private readonly config: IntakeConfig,
  ) {}

  async inspect(key: string, length: number, field: IntakeField): Promise<DetectedMedia> {
    const head = await this.read(key, 0, Math.min(length, HEAD_BYTES));
    if (hasImageSignature(head)) return this.image(key, length, field);
    const container = sniffContainer(head);
    if (container) return this.video(key, length, field, container);
    const detected = detectMedia(head);
    throw errors.validation(
      field,
      inField(field, detected.ok ? 'the file is not accepted' : detected.reason),
    );
  }

  /** An image is small (MEDIA_MAX_BYTES): read whole, as the image checks need it. */
  private async image(key: string, length: number, field: IntakeField): Promise<DetectedMedia> {
    if (length > this.config.MEDIA_MAX_BYTES) throw errors.fileTooLarge(field, this.config.MEDIA_MAX_BYTES);
    const bytes = await this.read(key, 0, length);
    const detected = detectMedia(bytes, this.config.MEDIA_MAX_PIXELS);
    if (!detected.ok) throw errors.validation(field, inField(field, detected.reason));
    const shown = await displayedSize(this.files.images, bytes);
    if (!shown)
      throw errors.validation(
        field,
        inField(field, 'the file cannot be read as an image (truncated or corrupt)'),
      );
    const sha256 = createHash('sha256').update(bytes).digest('hex');
    return { kind: 'image', mime: detected.mime, ...shown, sha256, ...NO_VIDEO_FACTS };
  }

  /**
   * The probe reads the file front to back (stopping after the movie header when that comes
   * first); the digest takes the same bytes as they pass and then reads whatever is left.
   */
  private async video(
    key: string,
    length: number,
    field: IntakeField,
    container: 'mp4' | 'mov',
  ): Promise<DetectedMedia> {
    if (length > this.config.MEDIA_VIDEO_MAX_BYTES)
      throw errors.fileTooLarge(field, this.config.MEDIA_VIDEO_MAX_BYTES);
    const hash = createHash('sha256');
    let hashed = 0;
    const staging = this.files.staging;
    async function* hashing() {
      for await (const chunk of staging.readStaged(key, 0, length)) {
        hash.update(chunk);
        hashed += chunk.length;
        yield chunk;
      }
    }
    const facts = await probeVideo(hashing(), {
      sizeBytes: length,
      maxBytes: this.config.MEDIA_VIDEO_MAX_BYTES,
      timeoutMs: this.config.MEDIA_PROBE_TIMEOUT_MS,
    }).catch((error: unknown) => {
      throw refusal(error, field, container, this.config.MEDIA_VIDEO_MAX_BYTES);
    });
    for await (const chunk of staging.readStaged(key, hashed, length)) hash.update(chunk);
    return { ...videoColumns(facts), sha256: hash.digest('hex') };
  }

  private async read(key: string, from: number, to: number): Promise<Buffer> {
    const chunks: Buffer[] = [];
    for await (const chunk of this.files.staging.readStaged(key, from, to)) chunks.push(chunk);
    return Buffer.concat(chunks);
  }
}

function videoColumns(facts: VideoFacts): Omit<DetectedMedia, 'sha256'> {
  return {
    kind: 'video',
    mime: facts.container === 'mov' ? 'video/quicktime' : 'video/mp4',
    width: facts.width,
    height: facts.height,
    durationMs: facts.durationMs,
    frameRate: facts.frameRate,
    videoCodec: facts.videoCodec,
    audioCodec: facts.audioCodec,
    audioSampleRateHz: facts.audioSampleRateHz,
    bitRate: facts.bitRate,
    moovAtFront: facts.moovAtFront,
    hasEditList: facts.hasEditList,
  };
}

/** A probe failure as the partner's refusal: what is wrong with the file, and what would do. */
function refusal(error: unknown, field: IntakeField, container: 'mp4' | 'mov', maxBytes: number) {
  if (!(error instanceof VideoProbeError)) return error;
  if (error.reason === 'too_large') return errors.fileTooLarge(field, maxBytes);
  return errors.validation(field, inField(field, describeFailure(error, container)));
}

function describeFailure(error: VideoProbeError, container: 'mp4' | 'mov'): string {
  const name = container === 'mov' ? 'a QuickTime (MOV) file' : 'an MP4 file';
  const detail = error.message;
  switch (error.reason) {
    case 'no_video_track':
      return `the file is ${name} without a video track (${detail})`;
    case 'truncated':
      return `the file is ${name} that is truncated (${detail}); upload it whole`;
    case 'too_slow':
      return `the file is ${name} whose structure could not be read in time (${detail})`;
    case 'fragmented':
      return (
        `the file is a fragmented ${container === 'mov' ? 'MOV' : 'MP4'} (as browsers record), which the networks do not take; ` +
        'write it as a regular file with its index first (for example ffmpeg -i in.mp4 -c copy -movflags +faststart out.mp4)'
      );
    case 'malformed':
      return `the file is ${name} that is malformed (${detail})`;
    default:
      return `the file starts like ${name} but is not a video that can be read (${detail})`;
  }
}

/** The refusal's wording for a file fetched by URL: "the file at url ...". */
function inField(field: IntakeField, reason: string): string {
  return field === 'url' ? reason.replace(/^the file/, 'the file at url') : reason;
}
