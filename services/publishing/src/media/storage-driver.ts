import type { PublishingConfig } from '../config.ts';
import { LocalMediaStorage } from './local-storage.ts';
import { S3MediaStorage } from './s3-storage.ts';
import type { MediaStorage } from './storage.ts';

/**
 * The media storage MEDIA_STORAGE names: a local folder (the default, for `pnpm start` and one
 * host), or an S3-compatible bucket shared by every replica (several pods, Kubernetes).
 */
export function openMediaStorage(config: PublishingConfig): MediaStorage & { close(): void } {
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
