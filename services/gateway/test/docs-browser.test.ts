import { launchChromium } from '@svc/browser';
import { type System, startSystem } from '@svc/testing/system';
import type { Browser } from 'playwright-core';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';

/**
 * `/v1/docs` in real headless Chromium: the viewer (Scalar, served by the gateway from its
 * node_modules) renders the OpenAPI document, and nothing is requested from anywhere else (no
 * CDN, font host, proxy or telemetry), under the page's Content-Security-Policy.
 */
let system: System;
let browser: Browser;

beforeAll(async () => {
  // The docs need no other service: the document is built from the route table.
  system = await startSystem({ services: ['gateway'] });
  browser = await launchChromium();
});
afterAll(async () => {
  await browser?.close();
  await system?.stop();
});

describe('the API reference page', () => {
  // Guarantee: a developer opening /v1/docs sees the operations, and the page reaches no host
  // but the gateway (every request, including fonts and scripts, stays on its origin).
  it('renders the operations without a request leaving the gateway', async () => {
    const origin = new URL(system.gatewayUrl).origin;
    const page = await browser.newPage();
    const requested: string[] = [];
    const problems: string[] = [];
    page.on('request', (request) => requested.push(request.url()));
    page.on('pageerror', (error) => problems.push(error.message));
    page.on('console', (message) => {
      if (message.type() === 'error') problems.push(message.text());
    });
    await page.goto(`${origin}/v1/docs`);
    // The first tag opens with its operations; the others are listed as groups.
    const operation = page.getByText('Create a workspace (200 with the existing one', { exact: false });
    await operation.first().waitFor({ timeout: 20_000 });
    expect(await page.getByText('List the workspace keys', { exact: false }).count()).toBeGreaterThan(0);
    expect(await page.getByText('Inbox', { exact: true }).count()).toBeGreaterThan(0);
    await page.close();

    const elsewhere = requested.filter((url) => !url.startsWith(`${origin}/`) && !/^(data|blob):/.test(url));
    expect(elsewhere).toEqual([]);
    expect(requested).toContain(`${origin}/v1/openapi.json`);
    expect(problems).toEqual([]);
  }, 60_000);
});
