import { mkdtemp, readdir, rm } from 'node:fs/promises';
import type { AddressInfo } from 'node:net';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { parseConfig } from '@svc/config';
import { createLogger } from '@svc/logging';
import { api, eventually } from '@svc/testing';
import { type Stack, startStack } from '@svc/testing/stack';
import S3rver from 's3rver';
import sharp from 'sharp';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { publishingConfigSchema } from '../src/config.ts';
import { MediaFiles } from '../src/media/media-files.ts';
import { S3MediaStorage, type S3Settings } from '../src/media/s3-storage.ts';

/**
 * MEDIA_STORAGE=s3 against a real S3-compatible server (s3rver, on a spare port): uploads land in
 * the bucket, not on a pod's disk; the networks' signed URLs read them back through the gateway;
 * a workspace's deletion removes its objects.
 */
let s3: S3rver;
let s3Dir: string;
let settings: S3Settings;
let storage: S3MediaStorage;
let stack: Stack;

beforeAll(async () => {
  s3Dir = await mkdtemp(path.join(tmpdir(), 's3rver-'));
  s3 = new S3rver({
    port: 0,
    address: '127.0.0.1',
    silent: true,
    directory: s3Dir,
    configureBuckets: [{ name: 'media', configs: [] }],
  });
  const { port } = (await s3.run()) as AddressInfo;
  // s3rver's fixed development credentials.
  settings = {
    bucket: 'media',
    region: 'us-east-1',
    endpoint: `http://127.0.0.1:${port}`,
    accessKeyId: 'S3RVER',
    secretAccessKey: 'S3RVER',
  };
  storage = new S3MediaStorage(settings);
  stack = await startStack({
    MEDIA_STORAGE: 's3',
    S3_BUCKET: settings.bucket,
    S3_REGION: settings.region,
    S3_ENDPOINT: settings.endpoint,
    S3_ACCESS_KEY_ID: settings.accessKeyId,
    S3_SECRET_ACCESS_KEY: settings.secretAccessKey,
  });
});
afterAll(async () => {
  await stack?.stop();
  storage?.close();
  await s3?.close();
  await rm(s3Dir, { recursive: true, force: true });
});

async function upload(key: string, workspace: string, bytes: Buffer): Promise<string> {
  const form = new FormData();
  form.append('workspace', workspace);
  form.append('file', new Blob([bytes], { type: 'image/png' }), 'logo.png');
  const response = await fetch(`${stack.gateway.url}/v1/media`, {
    method: 'POST',
    headers: { authorization: `Bearer ${key}` },
    body: form,
  });
  expect(response.status).toBe(201);
  return ((await response.json()) as { id: string }).id;
}

const mediaRow = (id: string) => stack.publishing.prisma.media.findUniqueOrThrow({ where: { id } });

describe('S3 media storage', () => {
  // Guarantee: the driver keeps the storage interface's promises: bytes back as written (whole or
  // as a stream with their size), null for a missing key, deleting twice is no error, and a key that could escape the prefix is refused.
  it('puts, gets and deletes objects', async () => {
    const bytes = Buffer.from('not really an image');
    await storage.put('med_driver.jpeg', bytes);
    expect(await storage.get('med_driver.jpeg')).toEqual(bytes);
    const opened = await storage.open('med_driver.jpeg');
    expect(opened?.size).toBe(bytes.length);
    expect(Buffer.concat(await (opened?.body.toArray() ?? []))).toEqual(bytes);
    expect(await storage.open('med_missing.jpeg')).toBeNull();
    await storage.delete('med_driver.jpeg');
    await storage.delete('med_driver.jpeg');
    expect(await storage.get('med_driver.jpeg')).toBeNull();
    await expect(storage.put('../escape', bytes)).rejects.toThrow('invalid media storage key');
  });

  // Guarantee: with MEDIA_STORAGE=s3 every replica reads the same files: an upload is stored in
  // the bucket (nothing on the local volume), the networks' signed URL serves its exact bytes
  // through the gateway, and deleting the workspace removes the object.
  it('stores uploads in the bucket, serves them by signed URL and purges them with the workspace', async () => {
    const { key } = await stack.createPartner();
    const call = api(stack.gateway.url, key);
    const workspace = (await call('POST', '/v1/workspaces', { name: 's3' })).body.id;
    const png = await sharp({ create: { width: 20, height: 10, channels: 3, background: '#0a78c8' } })
      .png()
      .toBuffer();
    const id = await upload(key, workspace, png);
    const row = await mediaRow(id);
    expect(await storage.get(row.storageKey)).toEqual(png);
    expect(await readdir(stack.mediaDir).catch(() => [])).toEqual([]);

    const env = { APP_ENV: 'development', PUBLIC_BASE_URL: stack.gateway.url };
    const config = parseConfig(publishingConfigSchema(env), env);
    const files = new MediaFiles(
      storage,
      config,
      createLogger('test', { level: 'silent' }),
      () => new Date(),
    );
    const response = await fetch(await files.publishableUrl(row, 'page_network'));
    expect(response.status).toBe(200);
    expect(Buffer.from(await response.arrayBuffer())).toEqual(png);

    expect((await call('DELETE', `/v1/workspaces/${workspace}`)).status).toBe(204);
    await eventually(async () => ((await storage.get(row.storageKey)) === null ? true : undefined), 15_000);
  });
});
