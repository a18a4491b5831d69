import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { launchChromium } from '@svc/browser';
import type { Browser } from 'playwright-core';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { type RunningSandbox, sandboxConfig, startSandbox } from '../src/index.ts';

let sb: RunningSandbox;
let browser: Browser;
let callback: Server;
let callbackUrl = '';

beforeAll(async () => {
  sb = await startSandbox(sandboxConfig({ port: 0, logLevel: 'silent' }));
  callback = createServer((_req, res) =>
    res.writeHead(200, { 'content-type': 'text/html' }).end('<p id="landed">connected</p>'),
  );
  await new Promise<void>((resolve) => callback.listen(0, '127.0.0.1', resolve));
  callbackUrl = `http://127.0.0.1:${(callback.address() as AddressInfo).port}/oauth/callback`;
  // No silent skip: without a Chromium this suite fails and says how to get one.
  browser = await launchChromium();
});
afterAll(async () => {
  await browser?.close();
  await sb?.close();
  // When beforeAll failed early there is no callback server; waiting on it would hang the hook.
  if (callback) await new Promise((resolve) => callback.close(resolve));
});

const dialog = (state: string) =>
  `${sb.url}/v25.0/dialog/oauth?client_id=${sb.world.config.appId}&redirect_uri=${encodeURIComponent(callbackUrl)}&state=${state}&scope=pages_show_list,instagram_basic`;

describe('consent dialog in a real browser', () => {
  // Guarantee: a person can pick a user, see the scopes and pages, approve, and land on redirect_uri with a code the code exchange accepts.
  it('picks a user, approves and lands on the redirect with a code', async () => {
    await fetch(`${sb.url}/__sandbox/users`, {
      method: 'POST',
      headers: { 'content-type': 'application/json' },
      body: JSON.stringify({ name: 'First', pages: [{ name: 'One' }] }),
    });
    const res = await fetch(`${sb.url}/__sandbox/users`, {
      method: 'POST',
      headers: { 'content-type': 'application/json' },
      body: JSON.stringify({ name: 'Second', pages: [{ name: 'Two A', instagram: {} }, { name: 'Two B' }] }),
    });
    const second = (await res.json()) as { user: { id: string }; pages: { id: string }[] };
    const page = await browser.newPage();
    await page.goto(dialog('st-1'));
    expect(await page.locator('#scopes').textContent()).toContain('instagram_basic');
    await page.check(`input[name=user_id][value="${second.user.id}"]`);
    await page.uncheck(`input[name=page_id][value="${second.pages[1]?.id}"]`);
    await Promise.all([page.waitForURL(/\/oauth\/callback/), page.click('#approve')]);
    const landed = new URL(page.url());
    expect(landed.searchParams.get('state')).toBe('st-1');
    const code = landed.searchParams.get('code') ?? '';
    expect(code).not.toBe('');
    expect(await page.locator('#landed').textContent()).toBe('connected');
    const exchange = new URLSearchParams({
      client_id: sb.world.config.appId,
      client_secret: sb.world.config.appSecret,
      redirect_uri: callbackUrl,
      code,
    });
    const token = (await (await fetch(`${sb.url}/v25.0/oauth/access_token?${exchange}`)).json()) as {
      access_token: string;
    };
    const accounts = (await (
      await fetch(`${sb.url}/v25.0/me/accounts?access_token=${token.access_token}`)
    ).json()) as { data: { id: string }[] };
    expect(accounts.data.map((p) => p.id)).toEqual([second.pages[0]?.id]);
  });

  // Guarantee: Deny lands on redirect_uri with error=access_denied and no code.
  it('denies', async () => {
    const page = await browser.newPage();
    await page.goto(dialog('st-2'));
    await Promise.all([page.waitForURL(/\/oauth\/callback/), page.click('#deny')]);
    const landed = new URL(page.url());
    expect(landed.searchParams.get('error')).toBe('access_denied');
    expect(landed.searchParams.get('code')).toBeNull();
  });
});
