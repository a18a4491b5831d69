import type { MediaView } from '@svc/contracts/public';
import { type DetailedError, Upload } from 'tus-js-client';
import { type Api, ApiFailure } from './api.ts';

/**
 * A video goes up by tus (`/v1/embed/uploads`, the API's resumable uploads at the widget's door),
 * in parts of `chunkBytes`: a PATCH that fails (a dropped connection, a gateway that restarted)
 * is asked again from the offset HEAD gives, so a long upload never starts over. The client is
 * tus-js-client: XHR under the hood, so progress moves within a part, not only between parts.
 */
export const DEFAULT_CHUNK_BYTES = 4 * 1024 * 1024;
/** The smallest part a host may ask for (`uploadChunkBytes`): each part is one request. */
const MIN_CHUNK_BYTES = 16 * 1024;

/** Pauses before each new try of a failed request; then the upload fails with the last error. */
const RETRY_DELAYS_MS = [0, 1_000, 3_000, 5_000, 10_000];

export interface VideoUpload {
  /** Settles with the media the upload became (read from its bytes by the server). */
  done: Promise<MediaView>;
  /** Stops sending and ends the upload on the server (tus termination). */
  cancel(): void;
}

export function uploadVideo(
  api: Api,
  file: File,
  options: { chunkBytes: number; onProgress(sentBytes: number, totalBytes: number): void },
): VideoUpload {
  let upload: Upload | undefined;
  let stop: (reason: ApiFailure) => void = () => {};
  const sent = new Promise<string>((resolve, reject) => {
    stop = reject;
    upload = new Upload(file, {
      endpoint: '/v1/embed/uploads',
      headers: { authorization: api.authorization },
      metadata: { filename: file.name },
      chunkSize: Math.max(MIN_CHUNK_BYTES, options.chunkBytes),
      retryDelays: RETRY_DELAYS_MS,
      // A session's upload is resumed within the page's life only: no URL kept in storage.
      storeFingerprintForResuming: false,
      onShouldRetry: shouldRetry,
      onProgress: options.onProgress,
      onSuccess: () => resolve(upload?.url ?? ''),
      onError: (error) => reject(failureOf(error)),
    });
    upload.start();
  });
  return {
    done: sent.then(async (url) => {
      // The upload as the server keeps it, with the media its last part made.
      const { media } = await api.get<{ media: MediaView | null }>(`/uploads/${url.split('/').pop()}`);
      if (!media)
        throw new ApiFailure({ status: 500, code: 'internal_error', message: 'The upload made no media.' });
      return media;
    }),
    cancel() {
      // tus-js-client reports nothing once aborted: the caller learns it here.
      stop(new ApiFailure({ status: 0, code: 'cancelled', message: 'The upload was cancelled.' }));
      upload?.abort(true).catch(() => {});
    },
  };
}

/**
 * Tried again: no answer at all, a server error, a 409 (the offset moved: HEAD says where) and a
 * 429 (too many parts at once). Never a refusal of the file itself (400, 403, 404, 413).
 */
function shouldRetry(error: DetailedError): boolean {
  const status = error.originalResponse?.getStatus() ?? 0;
  return status === 0 || status >= 500 || status === 409 || status === 423 || status === 429;
}

/** The server's refusal as the API's own error (message and field), or a plain network failure. */
function failureOf(error: Error | DetailedError): ApiFailure {
  const response = 'originalResponse' in error ? error.originalResponse : null;
  const status = response?.getStatus() ?? 0;
  try {
    const body = JSON.parse(response?.getBody() ?? '') as {
      error?: { code: string; message: string; field?: string };
    };
    if (body.error) return new ApiFailure({ status, ...body.error });
  } catch {
    // Not our envelope: a network failure or a proxy's page.
  }
  return new ApiFailure({
    status,
    code: 'network_error',
    message: 'The upload was interrupted. Check the connection and try again.',
  });
}
