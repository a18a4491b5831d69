import { launchChromium } from '@svc/browser';
import type { AccountView, MessageView, PostView } from '@svc/contracts/public';
import { api, eventually, Receiver } from '@svc/testing';
import { type Stack, startStack } from '@svc/testing/stack';
import type { Browser, Page } from 'playwright-core';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { HostServer } from './widget-host.ts';
import { appFrame, checkScreen, waitForEvent, widgetEvents } from './widget-screen.ts';

/**
 * The widget in real headless Chromium, mounted by a partner's page on another origin: connect in
 * a popup (with and without its opener), the live inbox, a reply from the widget, publishing, the
 * origins that may frame it, and an ended session. Each screen is screenshotted into
 * test-artifacts/widget/ at 320 px wide and checked with axe-core.
 */
let stack: Stack;
let browser: Browser;
let host: HostServer;
let receiver: Receiver;
let call: ReturnType<typeof api>;
let workspace: string;
let sandboxOrigin = '';
let jane: { user: { id: string } };
/** The Page post the publish test published: the private-reply test comments on it. */
let publishedOnPage = '';

beforeAll(async () => {
  stack = await startStack({ UNAUTHENTICATED_LIMIT_PER_MINUTE: '100000' });
  sandboxOrigin = new URL(stack.sandbox.url).origin;
  const { key } = await stack.createPartner();
  call = api(stack.gateway.url, key);
  receiver = await Receiver.start();
  expect((await call('PUT', '/v1/webhook', { url: receiver.url })).status).toBe(200);
  workspace = (await call('POST', '/v1/workspaces', { name: 'Bakery' })).body.id;
  jane = await stack.sandboxControl('POST', '/__sandbox/users', {
    name: 'Jane',
    pages: [{ name: 'Acme Bakery', instagram: { username: 'acmebakery' } }],
  });
  host = await HostServer.start(stack.gateway.url);
  // No silent skip: without a Chromium this suite fails and says how to get one.
  browser = await launchChromium();
});
afterAll(async () => {
  await browser?.close();
  await host?.close();
  await receiver?.close();
  await stack?.stop();
});

async function mint(allowed = [host.origin]) {
  const minted = await call('POST', '/v1/embed-sessions', { workspace, allowed_origins: allowed });
  expect(minted.status, JSON.stringify(minted.body)).toBe(201);
  return minted.body as { id: string; token: string };
}

/** A partner page (320 px wide) mounting one surface; resolves once the widget said `ready`. */
async function mountWidget(surface: 'connect' | 'inbox' | 'publish', token: string, waitReady = true) {
  const context = await browser.newContext({ viewport: { width: 320, height: 900 } });
  const page = await context.newPage();
  await page.goto(host.page(`${surface}-${Date.now()}`, { surface, token }));
  if (waitReady) await waitForEvent(page, 'ready');
  return { context, page, app: page.frameLocator('iframe') };
}

async function approveIn(popup: Page, userId: string) {
  await popup.waitForURL((url) => url.origin === sandboxOrigin && url.pathname.endsWith('/dialog/oauth'));
  await popup.check(`input[name=user_id][value="${userId}"]`);
  await popup.click('#approve');
}

async function accountsOfWorkspace() {
  return (await call('GET', `/v1/workspaces/${workspace}/accounts`)).body.data as AccountView[];
}

describe('the widget in a partner page', () => {
  // Guarantee: connecting through the widget opens the consent in a popup on the user's click; the
  // popup closes itself at the end, and the host page receives account.connected for each account.
  it('connects a Page and its Instagram account in a popup', { timeout: 30_000 }, async () => {
    const session = await mint();
    const { context, page, app } = await mountWidget('connect', session.token);
    // First render: from the frame's navigation to the screen drawn with its session read.
    const [ready] = await waitForEvent(page, 'ready');
    const render = await appFrame(page).evaluate<number>(
      "performance.getEntriesByName('widget-ready')[0].startTime",
    );
    console.log(
      `first render ${Math.round(render)} ms into the frame; ready ${Math.round(ready?.at ?? 0)} ms after the host page started`,
    );
    expect(render).toBeLessThan(1_000);
    expect(page.frames().some((f) => f.url().includes(session.token))).toBe(false);
    // `ready` means the session is read; the account list arrives just after it.
    await app.getByText('No account is connected yet.').waitFor({ timeout: 5_000 });
    await checkScreen(page, 'accounts-empty');

    const [popup] = await Promise.all([
      page.waitForEvent('popup'),
      app.getByRole('button', { name: 'Connect a Facebook Page' }).click(),
    ]);
    await approveIn(popup, jane.user.id);
    await popup.waitForEvent('close', { timeout: 10_000 });

    await eventually(async () => (await waitForEvent(page, 'account.connected')).length === 2 || undefined);
    const connected = (await widgetEvents(page)).filter((e) => e.name === 'account.connected');
    expect(connected.map((e) => e.data.account.display_name).sort()).toEqual(['Acme Bakery', 'Acme Bakery']);
    await app.getByText('@acmebakery').waitFor();
    await checkScreen(page, 'accounts-connected');
    await context.close();
  });

  // Guarantee: the result travels through our server, so a popup whose opener was cut still
  // completes the connection and the host hears of it.
  it('completes when the popup lost its opener', { timeout: 30_000 }, async () => {
    const sam = await stack.sandboxControl<{ user: { id: string } }>('POST', '/__sandbox/users', {
      name: 'Sam',
      pages: [{ name: 'Corner Cafe' }],
    });
    const session = await mint();
    const { context, page, app } = await mountWidget('connect', session.token);
    const [popup] = await Promise.all([
      page.waitForEvent('popup'),
      app.getByRole('button', { name: 'Connect a Facebook Page' }).click(),
    ]);
    await popup.waitForURL((url) => url.origin === sandboxOrigin);
    expect(await popup.evaluate('window.opener !== null')).toBe(true);
    await popup.evaluate('window.opener = null');
    expect(await popup.evaluate('window.opener === null')).toBe(true);
    await approveIn(popup, sam.user.id);
    const connected = await waitForEvent(page, 'account.connected', 10_000);
    expect(connected.map((e) => e.data.account.display_name)).toContain('Corner Cafe');
    await app.getByText('Corner Cafe').waitFor();
    await context.close();
  });

  // Guarantee: an inbound DM shows in the open inbox within 2 s; a reply sent from the widget
  // reaches the person at the network and the partner's webhook as message.sent, source widget.
  it('shows an inbound DM live and sends the reply', { timeout: 30_000 }, async () => {
    const pageAccount = (await accountsOfWorkspace()).find(
      (a) => a.display_name === 'Acme Bakery' && a.network === 'page_network',
    );
    expect(pageAccount).toBeDefined();
    const session = await mint();
    const { context, page, app } = await mountWidget('inbox', session.token);
    await app
      .getByText(/No conversation yet|Comments/)
      .first()
      .waitFor();

    const sentAt = Date.now();
    await stack.sandboxControl('POST', `/__sandbox/pages/${pageAccount?.platform_id}/messages`, {
      from: { username: 'rita', name: 'Rita Moreno' },
      text: 'Do you have sourdough today?',
    });
    await app.getByRole('button', { name: /Rita Moreno/ }).waitFor({ timeout: 2_000 });
    const elapsed = Date.now() - sentAt;
    console.log(`inbound DM shown in the widget after ${elapsed} ms`);
    expect(elapsed).toBeLessThan(2_000);
    await checkScreen(page, 'inbox');

    // By keyboard: the conversation is a button, the reply box a labelled field.
    await app.getByRole('button', { name: /Rita Moreno/ }).focus();
    await page.keyboard.press('Enter');
    await app.getByText('Do you have sourdough today?').waitFor();
    await app.getByText(/Reply window open/).waitFor();
    await checkScreen(page, 'thread');

    await app.getByLabel('Your message').focus();
    await page.keyboard.type('Yes, until noon!');
    await page.keyboard.press('Tab');
    await page.keyboard.press('Enter');
    const [sent] = await waitForEvent(page, 'message.sent');
    expect(sent?.data.message).toMatchObject({
      text: 'Yes, until noon!',
      source: 'widget',
      direction: 'outbound',
    });
    const atNetwork = await stack.sandboxControl<{ data: { text: string | null }[] }>(
      'GET',
      '/__sandbox/sent',
    );
    expect(atNetwork.data.map((m) => m.text)).toContain('Yes, until noon!');
    await eventually(() => {
      const delivered = receiver.requests
        .map((r) => JSON.parse(r.body) as { type: string; data: { message: MessageView } })
        .find((e) => e.type === 'message.sent' && e.data.message.id === sent?.data.message.id);
      expect(
        delivered?.data.message.source,
        receiver.requests.map((r) => r.body.slice(0, 200)).join('\n'),
      ).toBe('widget');
      return true;
    }, 15_000);
    await checkScreen(page, 'thread-replied');
    await context.close();
  });

  // Guarantee: a post composed in the widget (caption, image, targets) passes the checks shown
  // before sending and is published; the host receives post.created.
  it('publishes a post composed in the widget', { timeout: 30_000 }, async () => {
    const session = await mint();
    const { context, page, app } = await mountWidget('publish', session.token);
    await app.getByLabel('Caption').fill('Fresh bread at 7 #bakery');
    // A square JPEG drawn by the browser itself (Instagram takes ratios 0.8 to 1.91).
    const jpeg = await page.evaluate<number[]>(`(async () => {
      const canvas = new OffscreenCanvas(600, 600);
      const g = canvas.getContext('2d');
      g.fillStyle = '#c87828';
      g.fillRect(0, 0, 600, 600);
      const blob = await canvas.convertToBlob({ type: 'image/jpeg' });
      return Array.from(new Uint8Array(await blob.arrayBuffer()));
    })()`);
    await app
      .getByLabel(/^Images/)
      .setInputFiles({ name: 'bread.jpg', mimeType: 'image/jpeg', buffer: Buffer.from(jpeg) });
    await app.getByRole('img', { name: 'bread.jpg' }).waitFor();
    await app.getByRole('checkbox', { name: /Acme Bakery/ }).check();
    await app.getByRole('checkbox', { name: /@acmebakery/ }).check();
    await app.getByText(/@acmebakery \(Instagram\): ready/).waitFor();
    await app.getByText(/Acme Bakery \(Facebook Page\): ready/).waitFor();
    await checkScreen(page, 'composer');

    await app.getByRole('button', { name: 'Publish' }).click();
    const [created] = await waitForEvent(page, 'post.created');
    const postId = created?.data.post.id as string;
    await eventually(async () => {
      // Polled gently: the partner key's own rate limit applies to this test too.
      await new Promise((resolve) => setTimeout(resolve, 250));
      const post = await call('GET', `/v1/posts/${postId}`);
      expect(post.body.status, JSON.stringify(post.body)).toBe('published');
      const onPage = (post.body.targets as PostView['targets']).find((t) => t.network === 'page_network');
      publishedOnPage = onPage?.platform_post_id ?? '';
      return true;
    }, 15_000);
    await context.close();
  });

  // Guarantee: a comment on a published post can be answered privately from the widget; the
  // private reply goes out with source widget and the host receives message.sent.
  it('answers a comment with a private reply', { timeout: 30_000 }, async () => {
    expect(publishedOnPage).not.toBe('');
    const session = await mint();
    const { context, page, app } = await mountWidget('inbox', session.token);
    await stack.sandboxControl('POST', `/__sandbox/pages/posts/${publishedOnPage}/comments`, {
      from: { name: 'Jane Doe' },
      text: 'Do you ship to Ireland?',
    });
    await app.getByRole('button', { name: /Comments on “Fresh bread at 7/ }).click();
    await app.getByText('Do you ship to Ireland?').waitFor();
    await checkScreen(page, 'comments');
    await app.getByRole('button', { name: 'Reply privately' }).click();
    await app.getByLabel('Private reply (sent as a direct message)').fill('We do: details sent by message');
    await app.getByRole('button', { name: 'Send private reply' }).click();
    const [sent] = await waitForEvent(page, 'message.sent');
    expect(sent?.data.message).toMatchObject({
      kind: 'private_reply',
      source: 'widget',
      direction: 'outbound',
    });
    await context.close();
  });

  // Guarantee: the app answers frame-ancestors with the session's allowed origins only, so a page
  // on another origin cannot frame it (nor read the session from the API).
  it('cannot be framed by an origin outside allowed_origins', { timeout: 20_000 }, async () => {
    const session = await mint();
    const context = await browser.newContext();
    const page = await context.newPage();
    const refusals: string[] = [];
    page.on('console', (m) => {
      if (/frame-ancestors/.test(m.text())) refusals.push(m.text());
    });
    const appUrl = `${stack.gateway.url}/embed/app?session=${session.id}`;
    const answered = page.waitForResponse((r) => r.url() === appUrl);
    await page.goto(host.page('foreign-frame', { surface: 'inbox', frameUrl: appUrl }, 'localhost'));
    const response = await answered;
    expect(response.headers()['content-security-policy']).toContain(`frame-ancestors ${host.origin}`);
    expect(response.headers()['cache-control']).toBe('no-store');
    await eventually(() => refusals.length > 0 || undefined);
    const framed = page.frames().find((f) => f !== page.mainFrame());
    expect(framed?.url()).not.toContain('/embed/app');

    // Mounting from there fails too: the session is not readable from that origin.
    await page.goto(host.page('foreign-mount', { surface: 'inbox', token: session.token }, 'localhost'));
    await page.getByRole('alert').waitFor();
    expect((await widgetEvents(page)).map((e) => e.name)).not.toContain('ready');
    await context.close();
  });

  // Guarantee: widget.js is cacheable and versioned (ETag, 304 on revalidation); the session is
  // readable cross-origin from allowed origins only; an unknown session's app page says so, is
  // never framed and never cached.
  it('serves the loader cacheable, the session to allowed origins, and no unknown session', async () => {
    const gateway = stack.gateway.url;
    const loader = await fetch(`${gateway}/embed/widget.js`);
    expect(loader.status).toBe(200);
    expect(loader.headers.get('content-type')).toMatch(/^text\/javascript/);
    expect(loader.headers.get('cache-control')).toContain('max-age=300');
    const etag = loader.headers.get('etag') ?? '';
    expect(etag).toMatch(/^"[0-9a-f]{12}"$/);
    const again = await fetch(`${gateway}/embed/widget.js`, { headers: { 'if-none-match': etag } });
    expect(again.status).toBe(304);

    const session = await mint();
    const read = (origin: string) =>
      fetch(`${gateway}/v1/embed/session`, { headers: { authorization: `Bearer ${session.token}`, origin } });
    const allowed = await read(host.origin);
    expect(allowed.status).toBe(200);
    expect(allowed.headers.get('access-control-allow-origin')).toBe(host.origin);
    const foreign = await read(`http://localhost:${host.port}`);
    expect(foreign.status).toBe(200);
    expect(foreign.headers.get('access-control-allow-origin')).toBeNull();

    const unknown = await fetch(`${gateway}/embed/app?session=emb_doesnotexist`);
    expect(unknown.status).toBe(404);
    expect(unknown.headers.get('content-security-policy')).toContain("frame-ancestors 'none'");
    expect(unknown.headers.get('cache-control')).toBe('no-store');
    expect(await unknown.text()).toContain('This session has ended');
  });

  // Guarantee: ending a session shows a clear message in the open widget and tells the host
  // (session.expired); mounting with an ended token says so as well.
  it('shows an ended session and emits session.expired', { timeout: 20_000 }, async () => {
    const session = await mint();
    const { context, page, app } = await mountWidget('inbox', session.token);
    expect((await call('DELETE', `/v1/embed-sessions/${session.id}`)).status).toBe(204);
    await waitForEvent(page, 'session.expired');
    await app.getByRole('heading', { name: 'This session has ended' }).waitFor();
    await checkScreen(page, 'session-ended');
    expect((await fetch(`${stack.gateway.url}/embed/app?session=${session.id}`)).status).toBe(404);

    const again = await mountWidget('inbox', session.token, false);
    await waitForEvent(again.page, 'session.expired');
    await expect(again.page.getByRole('alert').textContent()).resolves.toContain('This session has ended');
    await again.context.close();
    await context.close();
  });

  // Guarantee: a session that reaches its expiry while the widget is open shows the same clear
  // message and tells the host (session.expired), with nobody ending it.
  it('shows an expired session and emits session.expired', { timeout: 20_000 }, async () => {
    const minted = await call('POST', '/v1/embed-sessions', {
      workspace,
      allowed_origins: [host.origin],
      expires_in: 60,
    });
    // Expiry brought forward before the token is first used, so no gateway holds the old one.
    await stack.identity.prisma.embedSession.update({
      where: { id: minted.body.id },
      data: { expiresAt: new Date(Date.now() + 4_000) },
    });
    const { context, page, app } = await mountWidget('inbox', minted.body.token);
    await waitForEvent(page, 'session.expired', 8_000);
    await app.getByRole('heading', { name: 'This session has ended' }).waitFor();
    await context.close();
  });
});
