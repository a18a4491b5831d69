import { mkdirSync, readFileSync } from 'node:fs';
import { createRequire } from 'node:module';
import { fileURLToPath } from 'node:url';
import { launchChromium } from '@svc/browser';
import { api } from '@svc/testing';
import { type Stack, startStack } from '@svc/testing/stack';
import type { Browser, BrowserContext, Page } from 'playwright-core';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';

/**
 * The hosted connect flow in real headless Chromium: our pages, the sandbox's consent dialog and
 * back. Each of our pages is screenshotted into test-artifacts/connect/, checked with axe-core,
 * and must load nothing (no script, no style, nothing else) from outside the service.
 */
const ARTIFACTS = fileURLToPath(new URL('../../../test-artifacts/connect/', import.meta.url));
const AXE_SOURCE = readFileSync(createRequire(import.meta.url).resolve('axe-core/axe.min.js'), 'utf8');
const BLOCKING_IMPACTS = ['serious', 'critical'];

interface AxeViolation {
  id: string;
  impact: string | null;
  help: string;
  nodes: { target: unknown[]; html: string; failureSummary?: string }[];
}

let stack: Stack;
let browser: Browser;
let call: ReturnType<typeof api>;
let gatewayOrigin = '';
let sandboxOrigin = '';

beforeAll(async () => {
  mkdirSync(ARTIFACTS, { recursive: true });
  stack = await startStack();
  gatewayOrigin = new URL(stack.gateway.url).origin;
  sandboxOrigin = new URL(stack.sandbox.url).origin;
  const { key } = await stack.createPartner();
  call = api(stack.gateway.url, key);
  // No silent skip: without a Chromium this suite fails and says how to get one.
  browser = await launchChromium();
});
afterAll(async () => {
  await browser?.close();
  await stack?.stop();
});

/** A new workspace and a connect link for it; returns the link's URL. */
async function connectLink(name: string, body: Record<string, unknown> = {}): Promise<string> {
  const workspace = await call('POST', '/v1/workspaces', { name });
  expect(workspace.status).toBe(201);
  const link = await call('POST', `/v1/workspaces/${workspace.body.id}/connect-links`, body);
  expect(link.status, JSON.stringify(link.body)).toBe(201);
  return link.body.url as string;
}

async function sandboxUser(name: string, pages: { name: string; instagram?: { username: string } }[]) {
  return stack.sandboxControl<{ user: { id: string }; pages: { id: string; name: string }[] }>(
    'POST',
    '/__sandbox/users',
    { name, pages },
  );
}

/**
 * A fresh browser context (own cookies) and page that records what it loads: every subresource
 * requested while a gateway page is the document, every navigation, and every CSP complaint.
 */
async function openBrowser() {
  const context: BrowserContext = await browser.newContext({ viewport: { width: 800, height: 700 } });
  const page = await context.newPage();
  const fromOurPages: { url: string; type: string; document: string }[] = [];
  const navigations: { url: string; from: string | undefined }[] = [];
  const cspComplaints: string[] = [];
  page.on('request', (request) => {
    // The document that asked (for a navigation, the one being left). The sandbox's consent page
    // is not ours (it has its own inline script and posts its own form): exempt.
    const document = request.frame().url();
    if (new URL(document).origin === sandboxOrigin) return;
    if (request.isNavigationRequest())
      navigations.push({ url: request.url(), from: request.redirectedFrom()?.url() });
    else fromOurPages.push({ url: request.url(), type: request.resourceType(), document });
  });
  page.on('console', (message) => {
    if (/Content Security Policy/i.test(message.text()))
      cspComplaints.push(`${page.url()}: ${message.text()}`);
  });
  return {
    context,
    page,
    /** Everything our pages asked for came from the gateway itself; nothing was refused by our CSP. */
    expectSelfContained(consentVisits: number) {
      const foreign = fromOurPages.filter((r) => new URL(r.url).origin !== gatewayOrigin);
      expect(foreign, 'requests from gateway pages to another origin').toEqual([]);
      // The stylesheet is really loaded from our origin (so the check above saw real traffic).
      expect(fromOurPages.some((r) => r.type === 'stylesheet' && r.url.endsWith('/assets/connect.css'))).toBe(
        true,
      );
      expect(fromOurPages.filter((r) => r.type === 'script')).toEqual([]);
      // A navigation leaves our origin only for the consent dialog, through our own /start redirect.
      const away = navigations.filter((nav) => new URL(nav.url).origin !== gatewayOrigin);
      expect(away).toHaveLength(consentVisits);
      for (const nav of away) {
        expect(new URL(nav.url).origin, nav.url).toBe(sandboxOrigin);
        expect(new URL(nav.url).pathname).toMatch(/\/dialog\/oauth$/);
        const from = new URL(nav.from ?? 'about:blank');
        expect(from.origin, nav.url).toBe(gatewayOrigin);
        expect(from.pathname).toMatch(/^\/connect\/[^/]+\/[a-z_]+\/start$/);
      }
      expect(cspComplaints).toEqual([]);
    },
  };
}

/** Screenshot one of our pages, check it has no script, and run axe-core on it. */
async function checkOurPage(page: Page, name: string) {
  expect(new URL(page.url()).origin).toBe(gatewayOrigin);
  await page.screenshot({ path: `${ARTIFACTS}${name}.png`, fullPage: true });
  expect(await page.locator('script').count(), `${name}: no <script> on our pages`).toBe(0);
  // The page's CSP allows no script, so axe is not added as a <script>: evaluate runs it
  // through the DevTools protocol, which page CSP does not govern.
  await page.evaluate(AXE_SOURCE);
  const violations = await page.evaluate(async () => {
    const { axe } = globalThis as unknown as {
      axe: { run(options: object): Promise<{ violations: AxeViolation[] }> };
    };
    const result = await axe.run({ resultTypes: ['violations'] });
    return result.violations.map((v) => ({
      id: v.id,
      impact: v.impact,
      help: v.help,
      nodes: v.nodes.map((n) => ({ target: n.target, html: n.html, failureSummary: n.failureSummary })),
    }));
  });
  for (const v of violations)
    console.log(
      `axe ${name}: ${v.impact} ${v.id} (${v.help})\n${v.nodes
        .map((n) => `  ${JSON.stringify(n.target)} ${n.html}\n    ${n.failureSummary ?? ''}`)
        .join('\n')}`,
    );
  const blocking = violations.filter((v) => BLOCKING_IMPACTS.includes(v.impact ?? ''));
  expect(
    blocking,
    `${name}: serious or critical axe violations\n${JSON.stringify(blocking, null, 2)}`,
  ).toEqual([]);
}

/** On the sandbox's consent dialog: pick the user, keep every Page ticked, Approve, land on our callback. */
async function approveAs(page: Page, userId: string) {
  await page.waitForURL((url) => url.origin === sandboxOrigin && url.pathname.endsWith('/dialog/oauth'));
  await page.check(`input[name=user_id][value="${userId}"]`);
  await Promise.all([page.waitForURL(/\/connect\/oauth\/callback\?/), page.click('#approve')]);
}

describe('hosted connect flow in a real browser', () => {
  // Guarantee: a person connects a Page with its Instagram account through the consent dialog, sees both named on the result page, finds them on the connect page and can disconnect one.
  it('connects a Page and its Instagram account, then disconnects one', { timeout: 90_000 }, async () => {
    const jane = await sandboxUser('Jane', [{ name: 'Acme Bakery', instagram: { username: 'acmebakery' } }]);
    const url = await connectLink('Bakery workspace');
    const { context, page, expectSelfContained } = await openBrowser();

    const first = await page.goto(url);
    expect(first?.status()).toBe(200);
    await expect(page.locator('h1').textContent()).resolves.toContain('Bakery workspace');
    expect(await page.getByText('No account is connected yet.').count()).toBe(1);
    await checkOurPage(page, 'connect-page');

    await page.getByRole('link', { name: 'Connect a Facebook Page' }).click();
    await page.waitForURL((u) => u.origin === sandboxOrigin);
    await page.screenshot({ path: `${ARTIFACTS}sandbox-consent.png`, fullPage: true });
    await approveAs(page, jane.user.id);

    expect(await page.locator('h1').textContent()).toBe('Accounts connected');
    const connected = page.locator('ul.plain li');
    await expect(connected.allTextContents()).resolves.toEqual([
      expect.stringMatching(/Acme Bakery\s+Facebook Page\s+Connected/),
      expect.stringMatching(/@acmebakery\s+Instagram\s+Connected/),
    ]);
    await checkOurPage(page, 'result');

    await Promise.all([
      page.waitForURL(url),
      page.getByRole('link', { name: 'Back to the connect page' }).click(),
    ]);
    const rows = page.locator('li.row');
    await expect(rows.locator('strong').allTextContents()).resolves.toEqual(['Acme Bakery', '@acmebakery']);
    expect(await rows.getByRole('button', { name: /^Disconnect / }).count()).toBe(2);
    await checkOurPage(page, 'connect-page-connected');

    await Promise.all([
      page.waitForURL(/\?notice=disconnected$/),
      page.getByRole('button', { name: 'Disconnect @acmebakery (Instagram)' }).click(),
    ]);
    await expect(page.getByRole('status').textContent()).resolves.toBe('The account was disconnected.');
    await expect(rows.locator('strong').allTextContents()).resolves.toEqual(['Acme Bakery']);
    await checkOurPage(page, 'connect-page-disconnected');

    expectSelfContained(1);
    await context.close();
  });

  // Guarantee: granting several Pages shows the page picker; connecting the ticked Pages lands on the result page listing each of them.
  it('shows the page picker when several Pages were granted', { timeout: 90_000 }, async () => {
    const sam = await sandboxUser('Sam', [
      { name: 'Corner Cafe', instagram: { username: 'cornercafe' } },
      { name: 'Night Market' },
    ]);
    const url = await connectLink('Cafe workspace');
    const { context, page, expectSelfContained } = await openBrowser();
    await page.goto(url);
    await page.getByRole('link', { name: 'Connect a Facebook Page' }).click();
    await approveAs(page, sam.user.id);

    expect(await page.locator('h1').textContent()).toBe('Choose the Pages to connect');
    const choices = page.getByRole('checkbox');
    expect(await choices.count()).toBe(2);
    await expect(page.locator('label.choice').allTextContents()).resolves.toEqual([
      expect.stringContaining('Corner Cafe · linked Instagram @cornercafe'),
      expect.stringContaining('Night Market · no linked Instagram account'),
    ]);
    await checkOurPage(page, 'picker');

    await Promise.all([
      page.waitForURL(/\/connect\/oauth\/pages$/),
      page.getByRole('button', { name: 'Connect the selected Pages' }).click(),
    ]);
    expect(await page.locator('h1').textContent()).toBe('Accounts connected');
    await expect(page.locator('li.row strong').allTextContents()).resolves.toEqual(
      expect.arrayContaining(['Corner Cafe', '@cornercafe', 'Night Market']),
    );
    await checkOurPage(page, 'picker-result');

    expectSelfContained(1);
    await context.close();
  });

  // Guarantee: an unknown link answers 404 with a page that says so, and nothing else.
  it('explains an unknown link', async () => {
    const { context, page, expectSelfContained } = await openBrowser();
    const response = await page.goto(`${stack.gateway.url}/connect/cnt_doesnotexist`);
    expect(response?.status()).toBe(404);
    expect(await page.locator('h1').textContent()).toBe('This link is not valid');
    await checkOurPage(page, 'unknown-link');
    expectSelfContained(0);
    await context.close();
  });

  // Guarantee: connecting Instagram through a Page without a linked Instagram account ends on a result page that names the Page and says how to fix it.
  it('shows a problem when the Page has no Instagram account', { timeout: 90_000 }, async () => {
    const lee = await sandboxUser('Lee', [{ name: 'Plain Page' }]);
    const url = await connectLink('Plain workspace');
    const { context, page, expectSelfContained } = await openBrowser();
    await page.goto(url);
    await page.getByRole('link', { name: 'Connect an Instagram professional account' }).click();
    await approveAs(page, lee.user.id);

    expect(await page.locator('h1').textContent()).toBe('The connection did not work');
    const problem = await page.getByRole('alert').textContent();
    expect(problem).toContain('Plain Page:');
    expect(problem).toContain('has no linked Instagram professional account');
    expect(await page.getByRole('link', { name: 'Back to the connect page' }).getAttribute('href')).toBe(
      new URL(url).pathname,
    );
    await checkOurPage(page, 'result-problem');

    expectSelfContained(1);
    await context.close();
  });
});
