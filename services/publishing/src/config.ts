import { appEnv, baseConfigSchema, envBoolean, envInt, envSecret, loadConfig, z } from '@svc/config';
import { graphClientEnv } from '@svc/graph-client';

export function publishingConfigSchema(env = process.env) {
  const mode = appEnv(env);
  return baseConfigSchema(mode).extend({
    PUBLISHING_GRPC_ADDRESS: z.string().default('127.0.0.1:50053'),
    IDENTITY_GRPC_URL: z.string().default('127.0.0.1:50051'),
    ACCOUNTS_GRPC_URL: z.string().default('127.0.0.1:50052'),
    OPS_PORT: envInt(9103, { max: 65535 }),
    // What this process runs: the gRPC API, the publish workers and scheduler, or both (default).
    // Split, the API answers promptly however busy the workers are, and each scales on its own.
    PUBLISHING_ROLE: z.enum(['all', 'api', 'worker']).default('all'),
    // Publish jobs a worker replica runs at once. A job mostly waits on the network (an Instagram
    // target holds its slot for its container's processing), so a replica's throughput is this
    // divided by the network's latency per target, far below what its CPU could do.
    PUBLISH_CONCURRENCY: envInt(64, { min: 1, max: 1_000 }),
    // This service's credential for the accounts token vault (one of its TOKEN_VAULT_CLIENTS).
    TOKEN_VAULT_CREDENTIAL: envSecret(mode, 'development-vault-publishing'),
    // Media files: a local folder by default; `s3`, an S3-compatible bucket every replica shares.
    MEDIA_STORAGE: z.enum(['local', 's3']).default('local'),
    MEDIA_DIR: z.string().default('var/media'),
    S3_BUCKET: z.string().default(''),
    S3_REGION: z.string().default('us-east-1'),
    // An S3-compatible server (MinIO, R2...), addressed path-style; empty for AWS S3 itself.
    S3_ENDPOINT: z.union([z.url(), z.literal('')]).default(''),
    // Both empty: the SDK's default credentials (the pod's IAM role...).
    S3_ACCESS_KEY_ID: z.string().default(''),
    S3_SECRET_ACCESS_KEY: z.string().default(''),
    MEDIA_MAX_BYTES: envInt(8 * 1024 * 1024, { min: 1024 }),
    // Videos (MP4, MOV) have their own limit: they arrive in parts and are streamed to storage,
    // never held whole. Below 2 GiB: sizes are 32-bit columns.
    MEDIA_VIDEO_MAX_BYTES: envInt(300 * 1024 * 1024, { min: 1024, max: 2 ** 31 - 1 }),
    // How long an unfinished upload (a resumable one, paused) keeps its bytes; tus's Upload-Expires.
    MEDIA_UPLOAD_TTL_SECONDS: envInt(24 * 3600, { min: 60 }),
    // Unfinished uploads one partner may have open at once (429 beyond); each holds storage.
    MEDIA_OPEN_UPLOADS_PER_PARTNER: envInt(50, { min: 1 }),
    // Reading a stored video's structure (the probe walks the file; the media data is skipped).
    MEDIA_PROBE_TIMEOUT_MS: envInt(30_000, { min: 100 }),
    // Images with more pixels are refused at upload and never decoded: a few KB of compressed
    // pixels can claim 16383x16383 and take GiBs to decode. 36 megapixels is far above what the
    // networks show (Instagram at most 1440 px wide, Facebook photos at most 2048 px a side).
    MEDIA_MAX_PIXELS: envInt(36_000_000, { min: 1 }),
    // Image decodes and conversions one process runs at once (each up to MEDIA_MAX_PIXELS x 4
    // bytes of memory); more wait their turn.
    MEDIA_IMAGE_CONCURRENCY: envInt(2, { min: 1, max: 64 }),
    // Uploads and fetches by URL one process handles at once, per partner and in all; a request
    // over either bound is refused with 429 rate_limited (and Retry-After).
    MEDIA_UPLOADS_PER_PARTNER: envInt(4, { min: 1 }),
    MEDIA_UPLOADS_TOTAL: envInt(16, { min: 1 }),
    // Fetching media by URL: connecting and the response's headers, and the silence allowed
    // between two parts of the body...
    MEDIA_FETCH_TIMEOUT_MS: envInt(10_000, { min: 100 }),
    // ...and the whole transfer, body included (a video of a few hundred MB takes a while).
    MEDIA_FETCH_TRANSFER_TIMEOUT_MS: envInt(120_000, { min: 100 }),
    // Where the networks fetch media from: signed, expiring URLs on the gateway (`gateway`), or
    // with MEDIA_STORAGE=s3, presigned URLs of the bucket itself (`storage`), so the bytes go from
    // the bucket to Meta without passing through the gateway and publishing. Either way a URL
    // expires after MEDIA_URL_TTL_SECONDS (at most 7 days for a bucket's) and stops serving once
    // its media is deleted.
    MEDIA_URLS: z.enum(['gateway', 'storage']).default('gateway'),
    PUBLIC_BASE_URL: z.url().default('http://127.0.0.1:8080'),
    MEDIA_URL_SECRET: envSecret(mode, 'development-media-url-secret'),
    MEDIA_URL_TTL_SECONDS: envInt(3600, { min: 60 }),
    // Fetching media by URL from private addresses is allowed in development only.
    ALLOW_PRIVATE_NETWORKS: envBoolean(mode === 'development'),
    META_APP_ID: z.string().regex(/^\d+$/).default('465000000000001'),
    META_APP_SECRET: envSecret(mode, 'sandbox-app-secret-0123456789abcdef'),
    ...graphClientEnv,
  });
}

export type PublishingConfig = z.infer<ReturnType<typeof publishingConfigSchema>>;

export const loadPublishingConfig = (env = process.env): PublishingConfig =>
  loadConfig(publishingConfigSchema(env), env);
