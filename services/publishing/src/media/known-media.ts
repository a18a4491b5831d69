import { LocalCache } from '@svc/cache';
import { type Fields, selectList } from '@svc/db';
import type pg from 'pg';
import type { Media } from '../generated/prisma/client.ts';

/**
 * What post checks and signed-URL reads need of a media row; none of it ever changes. A video
 * carries the facts the networks' Reel and Story rules check.
 */
export interface KnownMedia {
  id: string;
  partnerId: string;
  workspaceId: string;
  /** 'image' or 'video' */
  kind: string;
  mime: string;
  width: number;
  height: number;
  /** Bytes. */
  size: number;
  storageKey: string;
  /** Null for an image. */
  video: KnownVideo | null;
}

/** A video's facts as read from its bytes when it was uploaded (see media-probe's VideoFacts). */
export interface KnownVideo {
  durationMs: number;
  /** Frames per second, to 2 decimals. */
  frameRate: number;
  /** 'h264', 'hevc', 'mpeg4', 'vp9', 'av1'... */
  videoCodec: string;
  /** 'aac', 'mp3', 'opus'...; null for a video without sound. */
  audioCodec: string | null;
  audioSampleRateHz: number | null;
  /** Bits per second over the whole file. */
  bitRate: number;
  /** The index (moov) before the media data: a fetcher can start playing before the end arrives. */
  moovAtFront: boolean;
  /** An edit list that changes what plays (a trim, a late start); Meta refuses those. */
  hasEditList: boolean;
}

/** The video's columns gathered into one object by the statement itself, null for an image. */
const VIDEO_OBJECT = `CASE WHEN kind = 'video' THEN json_build_object(
    'durationMs', duration_ms, 'frameRate', frame_rate, 'videoCodec', video_codec,
    'audioCodec', audio_codec, 'audioSampleRateHz', audio_sample_rate_hz, 'bitRate', bit_rate,
    'moovAtFront', moov_at_front, 'hasEditList', has_edit_list) END`;

const KNOWN_MEDIA_FIELDS: Fields<KnownMedia> = {
  id: true,
  partnerId: true,
  workspaceId: true,
  kind: true,
  mime: true,
  width: true,
  height: true,
  size: true,
  storageKey: true,
  video: VIDEO_OBJECT,
};

const KNOWN_MEDIA = {
  name: 'publishing_known_media',
  text: `SELECT ${selectList(KNOWN_MEDIA_FIELDS)} FROM media WHERE id = ANY($1)`,
};

/**
 * A kept row outlives its deletion on another replica by at most this long. That is harmless:
 * writing a post locks its media rows (a deleted one refuses the post) and a signed read finds no
 * file.
 */
const MAX_AGE_MS = 60_000;

/**
 * Media rows as post checks and signed-URL reads need them, kept: the post's checks read a row,
 * then each target's network fetches the file through a signed URL, which needs it again. Postgres
 * is the busiest process on the publish path, and reading every time cost it one more statement
 * per target.
 */
export class KnownMediaRows {
  private readonly kept = new LocalCache<KnownMedia>({ maxAgeMs: MAX_AGE_MS, maxEntries: 20_000 });

  constructor(private readonly pool: pg.Pool) {}

  /** The media of these ids that exist, by id. */
  async read(ids: readonly string[]): Promise<Map<string, KnownMedia>> {
    const found = new Map<string, KnownMedia>();
    const missing: string[] = [];
    for (const id of ids) {
      const kept = this.kept.peek(id);
      if (kept) found.set(id, kept);
      else missing.push(id);
    }
    if (missing.length === 0) return found;
    const { rows } = await this.pool.query<KnownMedia>({ ...KNOWN_MEDIA, values: [missing] });
    for (const media of rows) {
      this.kept.set(media.id, media);
      found.set(media.id, media);
    }
    return found;
  }

  /**
   * A media made in this process, kept from the start: the post that uses it, typically next,
   * finds it here instead of reading it back.
   */
  keep(media: Media): void {
    this.kept.set(media.id, knownMediaOf(media));
  }

  forget(id: string): void {
    this.kept.forget(id);
  }

  close(): void {
    this.kept.close();
  }
}

function knownMediaOf(media: Media): KnownMedia {
  const { id, partnerId, workspaceId, kind, mime, width, height, size, storageKey } = media;
  return { id, partnerId, workspaceId, kind, mime, width, height, size, storageKey, video: videoOf(media) };
}

function videoOf(media: Media): KnownVideo | null {
  if (media.kind !== 'video') return null;
  return {
    durationMs: media.durationMs ?? 0,
    frameRate: media.frameRate ?? 0,
    videoCodec: media.videoCodec ?? '',
    audioCodec: media.audioCodec,
    audioSampleRateHz: media.audioSampleRateHz,
    bitRate: media.bitRate ?? 0,
    moovAtFront: media.moovAtFront ?? false,
    hasEditList: media.hasEditList ?? false,
  };
}
