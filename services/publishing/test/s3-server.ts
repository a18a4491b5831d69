import { mkdtemp, rm } from 'node:fs/promises';
import type { AddressInfo } from 'node:net';
import { tmpdir } from 'node:os';
import path from 'node:path';
import S3rver from 's3rver';
import type { S3Settings } from '../src/media/s3-storage.ts';

/** A real S3-compatible server (s3rver) on a spare port, with one bucket, `media`. */
export interface S3Server {
  settings: S3Settings;
  /** The same settings as publishing's environment (MEDIA_STORAGE=s3). */
  env: Record<string, string>;
  close(): Promise<void>;
}

export async function startS3Server(): Promise<S3Server> {
  const directory = await mkdtemp(path.join(tmpdir(), 's3rver-'));
  const server = new S3rver({
    port: 0,
    address: '127.0.0.1',
    silent: true,
    directory,
    configureBuckets: [{ name: 'media', configs: [] }],
  });
  const { port } = (await server.run()) as AddressInfo;
  // s3rver's fixed development credentials.
  const settings = {
    bucket: 'media',
    region: 'us-east-1',
    endpoint: `http://127.0.0.1:${port}`,
    accessKeyId: 'S3RVER',
    secretAccessKey: 'S3RVER',
  };
  const env = {
    MEDIA_STORAGE: 's3',
    S3_BUCKET: settings.bucket,
    S3_REGION: settings.region,
    S3_ENDPOINT: settings.endpoint,
    S3_ACCESS_KEY_ID: settings.accessKeyId,
    S3_SECRET_ACCESS_KEY: settings.secretAccessKey,
  };
  return {
    settings,
    env,
    async close() {
      await server.close();
      await rm(directory, { recursive: true, force: true });
    },
  };
}
