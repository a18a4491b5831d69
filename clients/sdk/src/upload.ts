import { Upload } from 'tus-js-client';
import type { components } from './generated/api.ts';

type Media = components['schemas']['Media'];

export interface UploadMediaOptions {
  /** Where the API answers, without /v1, and the key: as for createClient. */
  baseUrl: string;
  apiKey: string;
  workspace: string;
  /** A File or Blob in a browser; a Buffer in Node. */
  file: Blob | Buffer;
  filename?: string;
  /** Bytes per PATCH (default 8 MiB): what a broken connection costs at most. */
  chunkSize?: number;
  /** Called as parts arrive. */
  onProgress?: (sentBytes: number, totalBytes: number) => void;
  /** Waits between retries of a failed part; each retry resumes from the offset the API holds. */
  retryDelaysMs?: number[];
}

const DEFAULT_CHUNK = 8 * 1024 * 1024;

/**
 * Uploads a large file (a video) resumably with tus at `/v1/uploads`: in parts, each retried
 * from where the API says the upload stands after a broken connection. Resolves to the media
 * item the complete file became (its type and facts read from the bytes).
 */
export async function uploadMedia(options: UploadMediaOptions): Promise<Media> {
  const base = options.baseUrl.replace(/\/+$/, '');
  const authorization = `Bearer ${options.apiKey}`;
  const uploadUrl = await new Promise<string>((resolve, reject) => {
    const upload = new Upload(options.file, {
      endpoint: `${base}/v1/uploads`,
      headers: { Authorization: authorization },
      metadata: { workspace: options.workspace, ...(options.filename ? { filename: options.filename } : {}) },
      chunkSize: options.chunkSize ?? DEFAULT_CHUNK,
      retryDelays: options.retryDelaysMs ?? [0, 1_000, 3_000, 5_000],
      // A fresh upload each time: resuming across runs would need a store the caller controls.
      storeFingerprintForResuming: false,
      onProgress: (sent, total) => options.onProgress?.(sent, total),
      onError: reject,
      onSuccess: () => resolve(upload.url ?? ''),
    });
    upload.start();
  });
  const answer = await fetch(new URL(uploadUrl, base), { headers: { authorization } });
  const body = (await answer.json()) as { media: Media | null };
  if (!answer.ok || !body.media)
    throw new Error(`the upload ${uploadUrl} did not become a media item (${answer.status})`);
  return body.media;
}
