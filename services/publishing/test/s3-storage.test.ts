import { readdir, readFile } from 'node:fs/promises';
import { parseConfig } from '@svc/config';
import { createLogger } from '@svc/logging';
import { api, counterSum, eventually, uploadFile, videoFixture, workspaceWithAccounts } from '@svc/testing';
import { type Stack, startStack } from '@svc/testing/stack';
import sharp from 'sharp';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { publishingConfigSchema } from '../src/config.ts';
import { MediaFiles } from '../src/media/media-files.ts';
import { S3MediaStorage } from '../src/media/s3-storage.ts';
import { openMediaStorage } from '../src/media/storage-driver.ts';
import { type S3Server, startS3Server } from './s3-server.ts';

/**
 * MEDIA_STORAGE=s3 against a real S3-compatible server (s3rver, on a spare port): uploads land in
 * the bucket, not on a pod's disk; the networks' signed URLs read them back through the gateway,
 * or, with MEDIA_URLS=storage (this stack's setting), straight from the bucket; a workspace's
 * deletion removes its objects.
 */
let s3: S3Server;
let storage: S3MediaStorage;
let stack: Stack;

beforeAll(async () => {
  s3 = await startS3Server();
  storage = new S3MediaStorage(s3.settings);
  stack = await startStack({ ...s3.env, MEDIA_URLS: 'storage' });
});
afterAll(async () => {
  await stack?.stop();
  storage?.close();
  await s3?.close();
});

/** A PNG uploaded through the gateway, as partners upload. */
const upload = (key: string, workspace: string, bytes: Buffer) =>
  uploadFile(stack.gateway.url, key, workspace, bytes, 'logo.png');

const mediaRow = (id: string) => stack.publishing.prisma.media.findUniqueOrThrow({ where: { id } });

/** Files publishing has sent the gateway for the networks' signed URLs so far. */
const gatewayFileReads = () =>
  counterSum(`http://127.0.0.1:${stack.publishing.opsPort}/metrics`, 'grpc_server_handled_total', [
    'MediaFile"',
  ]);

const png = (width: number, height: number) =>
  sharp({ create: { width, height, channels: 3, background: '#0a78c8' } })
    .png()
    .toBuffer();

function configOf(env: Record<string, string>) {
  const all = { APP_ENV: 'development', ...env };
  return parseConfig(publishingConfigSchema(all), all);
}

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
    const image = await png(20, 10);
    const id = await upload(key, workspace, image);
    const row = await mediaRow(id);
    expect(await storage.get(row.storageKey)).toEqual(image);
    expect(await readdir(stack.mediaDir).catch(() => [])).toEqual([]);

    const config = configOf({ PUBLIC_BASE_URL: stack.gateway.url });
    const files = new MediaFiles(
      storage,
      config,
      createLogger('test', { level: 'silent' }),
      () => new Date(),
    );
    const url = await files.publishableUrl(row, 'page_network');
    expect(url.startsWith(`${stack.gateway.url}/media-files/`)).toBe(true);
    const response = await fetch(url);
    expect(response.status).toBe(200);
    expect(Buffer.from(await response.arrayBuffer())).toEqual(image);

    expect((await call('DELETE', `/v1/workspaces/${workspace}`)).status).toBe(204);
    await eventually(async () => ((await storage.get(row.storageKey)) === null ? true : undefined), 15_000);
  });

  // Guarantee: with MEDIA_URLS=storage the networks fetch a post's media from the bucket, not
  // through the gateway and publishing: a PNG posted to Instagram (its JPEG variant) and to a
  // Page is published with no file read by publishing for either, and the URL a network gets
  // serves the stored bytes with the type it was offered as, until the media is deleted.
  it('has the networks fetch media straight from the bucket (MEDIA_URLS=storage)', async () => {
    const { key } = await stack.createPartner();
    const call = api(stack.gateway.url, key);
    const { workspace, ig, page } = await workspaceWithAccounts(stack, call);
    const id = await upload(key, workspace, await png(1080, 1080));
    const readsBefore = await gatewayFileReads();
    const created = await call('POST', '/v1/posts?wait=true', {
      workspace,
      caption: 'From the bucket',
      media: [id],
      targets: [ig.id, page.id],
    });
    expect(created.status).toBe(201);
    expect(created.body.status).toBe('published');
    expect(await gatewayFileReads()).toBe(readsBefore);

    const files = new MediaFiles(
      storage,
      configOf({ MEDIA_STORAGE: 's3', MEDIA_URLS: 'storage' }),
      createLogger('test', { level: 'silent' }),
      () => new Date(),
    );
    const row = await mediaRow(id);
    const url = await files.publishableUrl(row, 'photo_network');
    expect(url.startsWith(`${s3.settings.endpoint}/${s3.settings.bucket}/`)).toBe(true);
    const jpeg = await fetch(url);
    expect(jpeg.status).toBe(200);
    expect(jpeg.headers.get('content-type')).toBe('image/jpeg');
    expect((await sharp(Buffer.from(await jpeg.arrayBuffer())).metadata()).format).toBe('jpeg');

    expect((await call('DELETE', `/v1/media/${id}`)).status).toBe(204);
    expect((await fetch(url)).status).toBe(404);
  });

  // Guarantee: a video goes the same way: a Reel is published from the bucket's URL (the
  // network downloads and checks the whole file there), with no file read by publishing.
  it('publishes a Reel whose video the network fetched from the bucket', async () => {
    const { key } = await stack.createPartner();
    const call = api(stack.gateway.url, key);
    const { workspace, ig } = await workspaceWithAccounts(stack, call);
    const video = await readFile(videoFixture('reel-h264-aac.mp4'));
    const id = await uploadFile(stack.gateway.url, key, workspace, video, 'reel.mp4');
    const readsBefore = await gatewayFileReads();
    const created = await call('POST', '/v1/posts', {
      workspace,
      caption: 'A reel from the bucket',
      media: [id],
      targets: [{ account: ig.id, format: 'reel' }],
    });
    expect(created.status).toBe(201);
    const done = await eventually(async () => {
      const post = (await call('GET', `/v1/posts/${created.body.id}`)).body;
      return post.status === 'publishing' ? undefined : post;
    }, 30_000);
    expect(done).toMatchObject({ status: 'published', targets: [{ format: 'reel', status: 'published' }] });
    expect(await gatewayFileReads()).toBe(readsBefore);
  });

  // Guarantee: a start-up with MEDIA_URLS=storage that cannot work says so, naming the variable:
  // a local folder serves no URLs, and a presigned URL cannot outlive 7 days.
  it('refuses MEDIA_URLS=storage without a bucket, or with an expiry a bucket cannot sign', () => {
    expect(() => openMediaStorage(configOf({ MEDIA_URLS: 'storage' }))).toThrow(
      'MEDIA_URLS=storage needs MEDIA_STORAGE=s3',
    );
    const tooLong = { MEDIA_STORAGE: 's3', S3_BUCKET: 'media', MEDIA_URLS: 'storage' };
    expect(() => openMediaStorage(configOf({ ...tooLong, MEDIA_URL_TTL_SECONDS: '700000' }))).toThrow(
      'MEDIA_URL_TTL_SECONDS is over 604800',
    );
  });
});
