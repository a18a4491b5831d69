import { readFileSync } from 'node:fs';
import { launchChromium } from '@svc/browser';
import type { PostView } from '@svc/contracts/public';
import { api, videoFixture, workspaceWithAccounts } from '@svc/testing';
import { type Stack, startStack } from '@svc/testing/stack';
import type { Browser, Frame } from 'playwright-core';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { HostServer } from './widget-host.ts';
import { appFrame, checkScreen, waitForEvent } from './widget-screen.ts';

/**
 * The widget's publish surface with a video (issue 28), in real headless Chromium: a partner's
 * page mounts it with 16 KiB upload parts, the user picks a Reel's video, watches it go up by tus
 * part after part, chooses Reel, sees the server's checks and publishes; the target shows as
 * published with its /reel/ link and the network received exactly one Reel.
 */
/** Small parts, so the 37 KB test video crosses in three PATCHes and progress shows steps. */
const CHUNK_BYTES = 16 * 1024;
const VIDEO = videoFixture('reel-h264-aac.mp4');

let stack: Stack;
let browser: Browser;
let host: HostServer;
let call: ReturnType<typeof api>;
let ws: Awaited<ReturnType<typeof workspaceWithAccounts>>;

beforeAll(async () => {
  stack = await startStack({ UNAUTHENTICATED_LIMIT_PER_MINUTE: '100000' });
  const { key } = await stack.system.createPartner(undefined, { limitPerMinute: 100_000 });
  call = api(stack.gateway.url, key);
  ws = await workspaceWithAccounts(stack, call, { page: 'Reel Bakery', username: 'reelbakery' });
  host = await HostServer.start(stack.gateway.url);
  browser = await launchChromium();
});
afterAll(async () => {
  await browser?.close();
  await host?.close();
  await stack?.stop();
});

/**
 * Records every value the upload's <progress> shows, in the frame itself (a MutationObserver),
 * so no step is missed between two polls of the test.
 */
function recordProgress(frame: Frame) {
  // A string: the frame's DOM types are not in the gateway's compiler settings.
  return frame.evaluate(`(() => {
    const seen = [];
    globalThis.progressSeen = seen;
    const note = () => {
      const bar = document.querySelector('progress');
      if (bar && seen[seen.length - 1] !== bar.value) seen.push(bar.value);
    };
    new MutationObserver(note).observe(document.body, {
      subtree: true, childList: true, attributes: true, attributeFilter: ['value'],
    });
  })()`);
}

/**
 * The publish surface in a 320 px partner page, with 16 KiB upload parts; `patches` lists the
 * upload PATCHes the widget sends (from the frame, as the browser sees them). The session is
 * granted the publish surface only: the composer lists its target accounts with nothing more.
 */
async function mountPublish(name: string) {
  const minted = await call('POST', '/v1/embed-sessions', {
    workspace: ws.workspace,
    allowed_origins: [host.origin],
    surfaces: ['publish'],
  });
  expect(minted.status, JSON.stringify(minted.body)).toBe(201);
  const context = await browser.newContext({ viewport: { width: 320, height: 1100 } });
  const page = await context.newPage();
  const patches: string[] = [];
  context.on('request', (request) => {
    if (request.method() === 'PATCH' && request.url().includes('/v1/embed/uploads/'))
      patches.push(request.url());
  });
  await page.goto(
    host.page(name, { token: minted.body.token, surface: 'publish', uploadChunkBytes: CHUNK_BYTES }),
  );
  await waitForEvent(page, 'ready');
  return { context, page, patches };
}

describe('the widget publishing a video', () => {
  // Guarantee: a video picked in the widget goes up by tus in several parts with its progress
  // shown rising to 100% (an accessible progress bar); the checks refuse Feed for a lone video
  // naming the field (`format`), and with Reel chosen say what would be sent; publishing shows
  // the target published with its /reel/ link; the network has exactly one REELS item, from
  // this account.
  it('uploads a Reel with its progress shown and publishes it', { timeout: 30_000 }, async () => {
    const { context, page, patches } = await mountPublish('reel');
    const app = page.frameLocator('iframe');
    await app.getByLabel('Caption').fill('Our first reel #bakery');

    await recordProgress(appFrame(page));
    await app.getByLabel(/^Images or a video/).setInputFiles(VIDEO);
    await app.getByText('Uploaded reel-h264-aac.mp4').waitFor({ timeout: 10_000 });
    const bar = app.getByRole('progressbar', { name: /reel-h264-aac\.mp4/ });
    expect(await bar.getAttribute('value')).toBe('100');
    expect(await bar.getAttribute('aria-valuetext')).toBe('100%');
    const seen = await appFrame(page).evaluate<number[]>('globalThis.progressSeen');
    console.log(`progress seen: ${seen.join(', ')}; ${patches.length} PATCHes`);
    const size = readFileSync(VIDEO).length;
    expect(patches).toHaveLength(Math.ceil(size / CHUNK_BYTES));
    expect(seen.at(-1)).toBe(100);
    expect(seen.filter((v) => v > 0 && v < 100).length, 'intermediate steps').toBeGreaterThanOrEqual(2);
    expect([...seen].sort((a, b) => a - b)).toEqual(seen);
    await app.getByRole('img', { name: 'reel-h264-aac.mp4' }).waitFor();

    // Feed (the default) is refused by the server's checks, which name the field to change.
    await app.getByRole('checkbox', { name: /@reelbakery/ }).check();
    await app.getByText(/Instagram publishes a single video as a Reel.*\(format\)$/).waitFor();
    await expect(app.getByRole('button', { name: 'Publish' }).isDisabled()).resolves.toBe(true);
    await app.getByRole('radio', { name: 'Reel' }).check();
    await expect(app.getByRole('checkbox', { name: 'Share to feed' }).isChecked()).resolves.toBe(true);
    await app.getByText(/@reelbakery \(Instagram\): ready to send as reel/).waitFor();
    await checkScreen(page, 'composer-video');

    await app.getByRole('button', { name: 'Publish' }).click();
    const [created] = await waitForEvent(page, 'post.created');
    expect(created?.data.post.targets[0]?.format).toBe('reel');
    const link = app.getByRole('link', { name: 'View on Instagram' });
    await link.waitFor({ timeout: 15_000 });
    await app.getByText(/@reelbakery \(Instagram, reel\): published/).waitFor();
    await app.getByText('Your post is published.').waitFor();
    const permalink = (await link.getAttribute('href')) ?? '';
    expect(permalink).toContain('/reel/');
    // The sent post's media left the draft, and its upload's bar with it.
    expect(await app.getByRole('progressbar').count()).toBe(0);
    await checkScreen(page, 'composer-video-published');

    const post = (await call('GET', `/v1/posts/${created?.data.post.id}`)).body as PostView;
    expect(post).toMatchObject({ status: 'published', reel: { share_to_feed: true } });
    expect(post.targets[0]).toMatchObject({ format: 'reel', permalink });
    const log = await stack.sandboxControl<{
      data: { media_product_type: string; account_id: string; media: { kind: string }[] }[];
    }>('GET', '/__sandbox/published');
    const reels = log.data.filter((item) => item.media_product_type === 'REELS');
    expect(reels).toHaveLength(1);
    expect(reels[0]).toMatchObject({ account_id: ws.ig.platform_id, media: [{ kind: 'video' }] });
    await context.close();
  });

  // Guarantee: a PATCH that fails on the way (the connection reset) does not start the upload
  // over: the widget asks HEAD where the upload stands and sends the rest from there, and the
  // media made is the whole file.
  it('resumes a video upload after a failed part', { timeout: 30_000 }, async () => {
    const { context, page, patches } = await mountPublish('resume');
    const heads: string[] = [];
    context.on('request', (request) => {
      if (request.method() === 'HEAD' && request.url().includes('/v1/embed/uploads/'))
        heads.push(request.url());
    });
    // The second part's request is reset once; every PATCH's offset is noted as it leaves.
    const offsets: number[] = [];
    await context.route('**/v1/embed/uploads/*', async (route) => {
      if (route.request().method() !== 'PATCH') return route.continue();
      offsets.push(Number(route.request().headers()['upload-offset']));
      if (offsets.length === 2) return route.abort('connectionreset');
      return route.continue();
    });
    const app = page.frameLocator('iframe');
    await app.getByLabel(/^Images or a video/).setInputFiles(VIDEO);
    await app.getByText('Uploaded reel-h264-aac.mp4').waitFor({ timeout: 15_000 });
    expect(heads.length).toBeGreaterThanOrEqual(1);
    // The failed part is sent again from where HEAD said the upload stands, never from 0.
    expect(offsets).toEqual([0, CHUNK_BYTES, CHUNK_BYTES, 2 * CHUNK_BYTES]);
    const uploadId = new URL(patches[0] ?? '').pathname.split('/').pop();
    const upload = (await call('GET', `/v1/uploads/${uploadId}`)).body;
    expect(upload.media).toMatchObject({ kind: 'video', size: readFileSync(VIDEO).length });
    await context.close();
  });
});
