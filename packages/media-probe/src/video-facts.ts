import { audioCodecName, videoCodecName } from './codec-names.ts';
import type { Container } from './container.ts';
import type { FileLayout } from './file-layout.ts';
import type { MovieSummary, TrackSummary } from './movie.ts';
import { VideoProbeError } from './probe-error.ts';

/** What a video file really is, read from its bytes (what Meta checks before taking a Reel or Story). */
export type VideoFacts = {
  container: Container;
  /** 'h264', 'hevc', 'vp9', 'av1', 'mpeg4', ... (see codec-names.ts); an unknown entry's own code. */
  videoCodec: string;
  /** 'aac', 'mp3', 'opus', ...; null without an audio track. */
  audioCodec: string | null;
  audioSampleRateHz: number | null;
  /** The size the video track is shown at: its header's size, turned by its rotation. */
  width: number;
  height: number;
  durationMs: number;
  /** Frames over the video track's duration, to 2 decimals. */
  frameRate: number;
  /** Over the whole file. */
  bitRate: number;
  sizeBytes: number;
  /** 'moov' before 'mdat': a player (and Meta) can start before the whole file has arrived. */
  moovAtFront: boolean;
  /** An edit list that changes what plays (see `changesPlayback`); Meta refuses those. */
  hasEditList: boolean;
};

/**
 * A single edit that starts the media this much late at most, at normal speed, is an encoder's:
 * x264's B-frame delay (2 frames: 133 ms at 15 fps) and AAC's priming (1024 to 2112 samples,
 * under 50 ms). ffmpeg writes one for nearly every file. A longer start is a trim.
 */
const ENCODER_SHIFT_MAX_SECONDS = 0.5;

export function videoFacts(layout: FileLayout, movie: MovieSummary): VideoFacts {
  const video = movie.tracks.find((track) => track.handler === 'vide');
  if (video === undefined) throw new VideoProbeError('no_video_track', 'the movie has no video track');
  const videoSeconds = video.timescale > 0 ? video.duration / video.timescale : 0;
  if (video.samples === 0 || videoSeconds <= 0) throw malformed('a video track with no frames');
  const durationMs = movieDurationMs(movie, videoSeconds);
  const audio = movie.tracks.find((track) => track.handler === 'soun');
  return {
    container: layout.container,
    videoCodec: videoCodecName(video.codec, video.objectType),
    audioCodec: audio ? audioCodecName(audio.codec, audio.objectType) : null,
    audioSampleRateHz: audio ? sampleRateHz(audio) : null,
    ...displaySize(video),
    durationMs,
    frameRate: Math.round((video.samples / videoSeconds) * 100) / 100,
    bitRate: Math.round((layout.sizeBytes * 8 * 1000) / durationMs),
    sizeBytes: layout.sizeBytes,
    moovAtFront: layout.moovAtFront,
    hasEditList: movie.tracks.some((track) => changesPlayback(track, movie.timescale)),
  };
}

/** The movie header's duration; the video track's when the header leaves it at 0. */
function movieDurationMs(movie: MovieSummary, videoSeconds: number): number {
  const seconds = movie.timescale > 0 && movie.duration > 0 ? movie.duration / movie.timescale : videoSeconds;
  const durationMs = Math.round(seconds * 1000);
  if (!(durationMs > 0)) throw malformed('a movie shorter than a millisecond');
  return durationMs;
}

/**
 * The track header's size turned by its matrix (QuickTime's [a b u; c d v; x y w], applied to
 * row vectors): a phone holding the camera upright stores 1920x1080 turned a quarter, shown
 * 1080x1920. Falls back to the coded size when the header gives none.
 */
function displaySize(track: TrackSummary): { width: number; height: number } {
  const width = track.width || track.codedWidth;
  const height = track.height || track.codedHeight;
  const [a = 1, b = 0, , c = 0, d = 1] = track.matrix.map((value) => value / 65536);
  return {
    width: Math.round(Math.abs(a * width) + Math.abs(c * height)),
    height: Math.round(Math.abs(b * width) + Math.abs(d * height)),
  };
}

/** The sample entry's rate; QuickTime's version 2 sound entries keep it elsewhere, and say 1 Hz. */
function sampleRateHz(track: TrackSummary): number {
  return track.sampleRateHz >= 1000 ? Math.round(track.sampleRateHz) : track.timescale;
}

/**
 * Whether the track's edit list does more than shift the start by an encoder's delay: several
 * edits, an empty edit (a track that starts late), another speed, a trim at either end.
 */
export function changesPlayback(track: TrackSummary, movieTimescale: number): boolean {
  const [edit, ...more] = track.edits;
  if (edit === undefined) return false;
  if (more.length > 0 || edit.rate !== 1 || edit.mediaTime < 0) return true;
  if (track.timescale <= 0 || movieTimescale <= 0) return true;
  const shiftSeconds = edit.mediaTime / track.timescale;
  const shownSeconds = edit.segmentDuration / movieTimescale;
  const mediaLeftSeconds = track.duration / track.timescale - shiftSeconds;
  return (
    shiftSeconds > ENCODER_SHIFT_MAX_SECONDS ||
    (shownSeconds > 0 && Math.abs(shownSeconds - mediaLeftSeconds) > ENCODER_SHIFT_MAX_SECONDS)
  );
}

function malformed(detail: string): VideoProbeError {
  return new VideoProbeError('malformed', `malformed movie: ${detail}`);
}
