/**
 * Codec names from what a sample entry says: its four-character code, and for MPEG-4 ('mp4v',
 * 'mp4a') the object type of its decoder configuration (the registry at mp4ra.org). Unknown
 * codes come back as they are, so a caller can still name what it refuses.
 */
const VIDEO_BY_ENTRY: Record<string, string> = {
  avc1: 'h264',
  avc2: 'h264',
  avc3: 'h264',
  avc4: 'h264',
  hvc1: 'hevc',
  hev1: 'hevc',
  hvc2: 'hevc',
  hev2: 'hevc',
  dvh1: 'dolby-vision',
  dvhe: 'dolby-vision',
  dva1: 'dolby-vision',
  dvav: 'dolby-vision',
  vp08: 'vp8',
  vp09: 'vp9',
  av01: 'av1',
  vvc1: 'vvc',
  vvi1: 'vvc',
  s263: 'h263',
  h263: 'h263',
  apch: 'prores',
  apcn: 'prores',
  apcs: 'prores',
  apco: 'prores',
  ap4h: 'prores',
  ap4x: 'prores',
  jpeg: 'mjpeg',
  mjpa: 'mjpeg',
  mjpb: 'mjpeg',
  encv: 'encrypted',
};

/** 'mp4v' object types: MPEG-4 Visual (part 2), AVC, MPEG-2 profiles, MPEG-1, JPEG. */
const VIDEO_BY_OBJECT_TYPE: Record<number, string> = {
  32: 'mpeg4',
  33: 'h264',
  96: 'mpeg2',
  97: 'mpeg2',
  98: 'mpeg2',
  99: 'mpeg2',
  100: 'mpeg2',
  101: 'mpeg2',
  106: 'mpeg1',
  108: 'mjpeg',
};

const AUDIO_BY_ENTRY: Record<string, string> = {
  Opus: 'opus',
  'ac-3': 'ac3',
  'ec-3': 'eac3',
  'ac-4': 'ac4',
  alac: 'alac',
  fLaC: 'flac',
  '.mp3': 'mp3',
  samr: 'amr-nb',
  sawb: 'amr-wb',
  lpcm: 'pcm',
  ipcm: 'pcm',
  fpcm: 'pcm',
  sowt: 'pcm',
  twos: 'pcm',
  in24: 'pcm',
  in32: 'pcm',
  fl32: 'pcm',
  fl64: 'pcm',
  'raw ': 'pcm',
  enca: 'encrypted',
};

/** 'mp4a' object types: AAC (MPEG-4, and MPEG-2's three profiles), MP3 (MPEG-1 and -2), AC-3, E-AC-3, Opus. */
const AUDIO_BY_OBJECT_TYPE: Record<number, string> = {
  64: 'aac',
  102: 'aac',
  103: 'aac',
  104: 'aac',
  105: 'mp3',
  107: 'mp3',
  165: 'ac3',
  166: 'eac3',
  173: 'opus',
};

/** From mp4box's codec string ('avc1.64001f', 'mp4v') and, for 'mp4v', the object type. */
export function videoCodecName(codec: string, objectType: number | null): string {
  const entry = entryCode(codec);
  if (entry === 'mp4v') return (objectType !== null && VIDEO_BY_OBJECT_TYPE[objectType]) || 'mp4v';
  return VIDEO_BY_ENTRY[entry] ?? entry.trim().toLowerCase();
}

/** From mp4box's codec string ('mp4a.40.2') and, for 'mp4a', the object type. */
export function audioCodecName(codec: string, objectType: number | null): string {
  const entry = entryCode(codec);
  if (entry === 'mp4a') return (objectType !== null && AUDIO_BY_OBJECT_TYPE[objectType]) || 'mp4a';
  return AUDIO_BY_ENTRY[entry] ?? entry.trim().toLowerCase();
}

/** mp4box's codec strings begin with the entry's code, whose four characters may hold '.' ('.mp3'). */
function entryCode(codec: string): string {
  return codec.slice(0, 4);
}
