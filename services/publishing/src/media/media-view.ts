import type { MediaView } from '@svc/contracts/public';
import type { Media } from '../generated/prisma/client.ts';

/** A media record as partners see it (`MediaView`): the only place a media row becomes it. */
export function viewOfMedia(row: Media): MediaView {
  return {
    id: row.id,
    workspace: row.workspaceId,
    kind: row.kind,
    mime: row.mime,
    width: row.width,
    height: row.height,
    duration_ms: row.durationMs,
    size: row.size,
    // No poster frame: cutting one out of a video needs a decoder, which this service does not run.
    thumbnail_url: null,
    video: videoOf(row),
    created: row.createdAt.toISOString(),
  };
}

function videoOf(row: Media): MediaView['video'] {
  const { videoCodec, frameRate, bitRate, moovAtFront, hasEditList } = row;
  if (row.kind !== 'video' || videoCodec === null || frameRate === null || bitRate === null) return null;
  return {
    video_codec: videoCodec,
    audio_codec: row.audioCodec,
    audio_sample_rate_hz: row.audioSampleRateHz,
    frame_rate: frameRate,
    bit_rate: bitRate,
    moov_at_front: moovAtFront ?? false,
    has_edit_list: hasEditList ?? false,
  };
}
