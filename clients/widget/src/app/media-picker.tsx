import type { MediaView } from '@svc/contracts/public';
import { useEffect, useRef, useState } from 'preact/hooks';
import { failureText } from './api.ts';
import type { Ctx } from './context.ts';
import { uploadVideo, type VideoUpload } from './tus-upload.ts';

/** A picked file as the composer holds it: its media record, and what to show for it. */
export interface Picked extends MediaView {
  /** An object URL of an image; empty for a video (the app's CSP plays no media). */
  preview: string;
  name: string;
}

interface Progress {
  name: string;
  percent: number;
  phase: 'sending' | 'reading' | 'done' | 'failed';
  /** The media it made, once done: the bar shows as long as the post holds it. */
  mediaId?: string;
}

const IMAGE_TYPES = ['image/jpeg', 'image/png', 'image/webp'];
const VIDEO_TYPES = ['video/mp4', 'video/quicktime'];
const isVideo = (file: File) => VIDEO_TYPES.includes(file.type) || /\.(mp4|mov)$/i.test(file.name);

/**
 * The files of a post: images go up as a form, as they always did; a video goes up by tus in
 * parts, its progress shown as a percentage while it travels. Files are sent one after another.
 */
export function MediaPicker(props: {
  ctx: Ctx;
  media: Picked[];
  onAdd(picked: Picked): void;
  onRemove(id: string): void;
  onProblem(text: string): void;
}) {
  const [progress, setProgress] = useState<Progress | null>(null);
  const inFlight = useRef<VideoUpload | null>(null);
  useEffect(() => () => inFlight.current?.cancel(), []);

  async function sendVideo(file: File): Promise<MediaView> {
    const show = (percent: number, phase: Progress['phase']) =>
      setProgress({ name: file.name, percent, phase });
    show(0, 'sending');
    const upload = uploadVideo(props.ctx.api, file, {
      chunkBytes: props.ctx.uploadChunkBytes,
      onProgress: (sent, total) =>
        show(Math.floor((sent / Math.max(total, 1)) * 100), sent < total ? 'sending' : 'reading'),
    });
    inFlight.current = upload;
    try {
      const media = await upload.done;
      setProgress({ name: file.name, percent: 100, phase: 'done', mediaId: media.id });
      return media;
    } catch (error) {
      setProgress((p) => p && { ...p, phase: 'failed' });
      throw error;
    } finally {
      inFlight.current = null;
    }
  }

  async function sendImage(file: File): Promise<MediaView> {
    const form = new FormData();
    form.append('file', file);
    return props.ctx.api.post<MediaView>('/media', form);
  }

  async function pick(input: HTMLInputElement) {
    const files = Array.from(input.files ?? []);
    input.value = '';
    for (const file of files) {
      try {
        const video = isVideo(file);
        const record = video ? await sendVideo(file) : await sendImage(file);
        props.onAdd({ ...record, preview: video ? '' : URL.createObjectURL(file), name: file.name });
      } catch (error) {
        props.onProblem(`${file.name}: ${failureText(error)}`);
      }
    }
  }

  const sending = progress?.phase === 'sending' || progress?.phase === 'reading';
  const shown = progress?.phase !== 'done' || props.media.some((m) => m.id === progress.mediaId);
  return (
    <div class="media-picker">
      <label for="media-files">Images or a video (JPEG, PNG, WebP; MP4 or MOV)</label>
      <input
        id="media-files"
        type="file"
        accept={[...IMAGE_TYPES, ...VIDEO_TYPES].join(',')}
        multiple
        disabled={sending}
        onChange={(e) => pick(e.target as HTMLInputElement)}
      />
      {progress && shown && (
        <UploadProgress progress={progress} onCancel={() => inFlight.current?.cancel()} />
      )}
      {props.media.length > 0 && (
        <ul class="thumbs" aria-label="Picked media">
          {props.media.map((m) => (
            <li key={m.id}>
              <Thumb picked={m} />
              <button
                type="button"
                class="secondary small"
                aria-label={`Remove ${m.name}`}
                onClick={() => props.onRemove(m.id)}
              >
                Remove
              </button>
            </li>
          ))}
        </ul>
      )}
    </div>
  );
}

const PHASE_TEXT: Record<Progress['phase'], string> = {
  sending: 'Uploading',
  reading: 'Checking',
  done: 'Uploaded',
  failed: 'Upload failed:',
};

/** The video's upload: a labelled progress bar and its percentage, announced when it ends. */
function UploadProgress({ progress, onCancel }: { progress: Progress; onCancel(): void }) {
  const { name, percent, phase } = progress;
  return (
    <div class="upload">
      <label for="upload-progress">
        {PHASE_TEXT[phase]} {name}
      </label>
      <div class="upload-bar">
        <progress id="upload-progress" max={100} value={percent} aria-valuetext={`${percent}%`} />
        <span class="percent" aria-hidden="true">
          {percent}%
        </span>
        {phase === 'sending' && (
          <button type="button" class="secondary small" onClick={onCancel}>
            Cancel upload
          </button>
        )}
      </div>
      <p class="sr-only" role="status">
        {phase === 'done' ? `${name} uploaded` : phase === 'failed' ? `${name} was not uploaded` : ''}
      </p>
    </div>
  );
}

function Thumb({ picked }: { picked: Picked }) {
  if (picked.preview) return <img src={picked.preview} alt={picked.name} width={64} height={64} />;
  const seconds = Math.round((picked.duration_ms ?? 0) / 1000);
  return (
    <span class="video-thumb" role="img" aria-label={picked.name}>
      Video
      <br />
      {seconds} s
    </span>
  );
}
