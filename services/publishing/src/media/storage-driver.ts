import type { PublishingConfig } from '../config.ts';
import { LocalMediaStorage } from './local-storage.ts';
import { S3MediaStorage } from './s3-storage.ts';
import type { MediaStorage } from './storage.ts';

/**
 * The media storage MEDIA_STORAGE names: a local folder (the default, for `pnpm start` and one
 * host), or an S3-compatible bucket shared by every replica (several pods, Kubernetes).
 */
export function openMediaStorage(config: PublishingConfig): MediaStorage & { close(): void } {
  checkMediaUrls(config);
  if (config.MEDIA_STORAGE === 'local')
    return Object.assign(new LocalMediaStorage(config.MEDIA_DIR), { close() {} });
  if (!config.S3_BUCKET) throw new Error('invalid configuration: S3_BUCKET is not set (MEDIA_STORAGE=s3)');
  return new S3MediaStorage({
    bucket: config.S3_BUCKET,
    region: config.S3_REGION,
    endpoint: config.S3_ENDPOINT,
    accessKeyId: config.S3_ACCESS_KEY_ID,
    secretAccessKey: config.S3_SECRET_ACCESS_KEY,
  });
}

/** A presigned URL lives at most 7 days (SigV4). */
const MAX_DIRECT_URL_SECONDS = 7 * 24 * 3600;

/** MEDIA_URLS=storage needs a storage that serves URLs of its own, and an expiry it can sign. */
function checkMediaUrls(config: PublishingConfig): void {
  if (config.MEDIA_URLS !== 'storage') return;
  if (config.MEDIA_STORAGE !== 's3')
    throw new Error(
      'invalid configuration: MEDIA_URLS=storage needs MEDIA_STORAGE=s3 (a local folder serves no URLs of its own)',
    );
  if (config.MEDIA_URL_TTL_SECONDS > MAX_DIRECT_URL_SECONDS)
    throw new Error(
      `invalid configuration: MEDIA_URL_TTL_SECONDS is over ${MAX_DIRECT_URL_SECONDS} (MEDIA_URLS=storage: a presigned URL lives 7 days at most)`,
    );
}
