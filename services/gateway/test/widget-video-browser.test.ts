import { mkdirSync, readFileSync } from 'node:fs';
import { createServer, type Server } from 'node:http';
import { createRequire } from 'node:module';
import type { AddressInfo } from 'node:net';
import { fileURLToPath } from 'node:url';
import { launchChromium } from '@svc/browser';
import type { PostView } from '@svc/contracts/public';
import { api, videoFixture, workspaceWithAccounts } from '@svc/testing';
import { type Stack, startStack } from '@svc/testing/stack';
import type { Browser, Frame, Page } from 'playwright-core';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';

/**
 * The widget's publish surface with a video (issue 28), in real headless Chromium: a partner's
 * page mounts it with 16 KiB upload parts, the user picks a Reel's video, watches it go up by tus
 * part after part, chooses Reel, sees the server's checks and publishes; the target shows as
 * published with its /reel/ link and the network received exactly one Reel.
 */
const ARTIFACTS = fileURLToPath(new URL('../../../test-artifacts/widget/', import.meta.url));
const AXE_SOURCE = readFileSync(createRequire(import.meta.url).resolve('axe-core/axe.min.js'), 'utf8');
/** Small parts, so the 37 KB test video crosses in three PATCHes and progress shows steps. */
const CHUNK_BYTES = 16 * 1024;
const VIDEO = videoFixture('reel-h264-aac.mp4');

let stack: Stack;
let browser: Browser;
let host: Server;
let hostOrigin = '';
let call: ReturnType<typeof api>;
let ws: Awaited<ReturnType<typeof workspaceWithAccounts>>;
/** The page each request path serves (the token is minted per test). */
const pages = new Map<string, string>();

beforeAll(async () => {
  mkdirSync(ARTIFACTS, { recursive: true });
  stack = await startStack({ UNAUTHENTICATED_LIMIT_PER_MINUTE: '100000' });
  const { key } = await stack.system.createPartner(undefined, { limitPerMinute: 100_000 });
  call = api(stack.gateway.url, key);
  ws = await workspaceWithAccounts(stack, call, { page: 'Reel Bakery', username: 'reelbakery' });
  host = createServer((request, response) => {
    const page = pages.get(request.url ?? '');
    if (!page) return response.writeHead(404).end();
    response.writeHead(200, { 'content-type': 'text/html; charset=utf-8' }).end(page);
  });
  await new Promise<void>((resolve) => host.listen(0, '127.0.0.1', resolve));
  hostOrigin = `http://127.0.0.1:${(host.address() as AddressInfo).port}`;
  browser = await launchChromium();
});
afterAll(async () => {
  await browser?.close();
  await new Promise((resolve) => host?.close(resolve));
  await stack?.stop();
});

/** A partner's page mounting the publish surface with the given mount options (as widget.js takes them). */
function hostPage(path: string, options: Record<string, unknown>): string {
  pages.set(
    path,
    `<!doctype html><html lang="en"><head><meta charset="utf-8"><title>Partner product</title></head>
<body><main><h1>Partner product</h1><div id="widget"></div>
<script>window.widgetEvents = [];</script>
<script src="${stack.gateway.url}/embed/widget.js"></script>
<script>
const widget = SocialWidget.mount(document.getElementById('widget'), ${JSON.stringify(options)});
for (const name of ['ready', 'post.created', 'session.expired']) widget.on(name, (data) => window.widgetEvents.push({ name, data }));
</script></main></body></html>`,
  );
  return `${hostOrigin}${path}`;
}

async function waitForEvent(page: Page, name: string) {
  await page.waitForFunction(
    (n) =>
      (globalThis as unknown as { widgetEvents: { name: string }[] }).widgetEvents.some((e) => e.name === n),
    name,
    { timeout: 10_000 },
  );
  const events = await page.evaluate(
    () =>
      (globalThis as unknown as { widgetEvents: { name: string; data: { post: PostView } }[] }).widgetEvents,
  );
  return events.filter((e) => e.name === name);
}

function appFrame(page: Page): Frame {
  const frame = page.frames().find((f) => f.url().includes('/embed/app'));
  if (!frame) throw new Error('the widget frame is not there');
  return frame;
}

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

/** The 320 px screen: screenshotted, no wider than its frame, and without axe-core violations. */
async function checkScreen(page: Page, name: string) {
  await page.screenshot({ path: `${ARTIFACTS}${name}.png`, fullPage: true });
  const frame = appFrame(page);
  const overflow = await frame.evaluate<number>(
    'document.documentElement.scrollWidth - document.documentElement.clientWidth',
  );
  expect(overflow, `${name}: wider than its frame`).toBeLessThanOrEqual(0);
  await frame.evaluate(AXE_SOURCE);
  const violations = await frame.evaluate(async () => {
    const { axe } = globalThis as unknown as {
      axe: { run(o: object): Promise<{ violations: { id: string; nodes: { html: string }[] }[] }> };
    };
    const result = await axe.run({ resultTypes: ['violations'] });
    return result.violations.map((v) => ({ id: v.id, nodes: v.nodes.map((n) => n.html) }));
  });
  expect(violations, `${name}: axe violations`).toEqual([]);
}

/**
 * The publish surface in a 320 px partner page, with 16 KiB upload parts; `patches` lists the
 * upload PATCHes the widget sends (from the frame, as the browser sees them). The session is
 * granted the publish surface only: the composer lists its target accounts with nothing more.
 */
async function mountPublish(path: string) {
  const minted = await call('POST', '/v1/embed-sessions', {
    workspace: ws.workspace,
    allowed_origins: [hostOrigin],
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
    hostPage(path, { token: minted.body.token, surface: 'publish', uploadChunkBytes: CHUNK_BYTES }),
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
    const { context, page, patches } = await mountPublish('/reel');
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
    const { context, page, patches } = await mountPublish('/resume');
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
