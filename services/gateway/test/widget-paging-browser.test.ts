import { launchChromium } from '@svc/browser';
import { api, connectThroughLink, createUser, eventually, newLink } from '@svc/testing';
import { type Stack, startStack } from '@svc/testing/stack';
import type { Browser, FrameLocator } from 'playwright-core';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { HostServer } from './widget-host.ts';

/**
 * The widget's inbox past its first page, in real headless Chromium: "Show more" follows the
 * list's cursor, and new activity (live, over the stream) brings a conversation to the front
 * without showing any conversation twice or losing one.
 */
let stack: Stack;
let browser: Browser;
let host: HostServer;
let call: ReturnType<typeof api>;
let workspace: string;
let pageId: string;

/** One more than the widget's page of 50. */
const PEOPLE = 55;

beforeAll(async () => {
  stack = await startStack({ UNAUTHENTICATED_LIMIT_PER_MINUTE: '100000' });
  call = api(
    stack.gateway.url,
    (await stack.system.createPartner(undefined, { limitPerMinute: 100_000 })).key,
  );
  const user = await createUser(stack, [{ name: 'Busy Bakery' }]);
  const link = await newLink(call);
  workspace = link.workspaceId;
  await connectThroughLink(stack, link.url, 'page_network', { userId: user.user.id, decision: 'approve' });
  pageId = (await call('GET', `/v1/workspaces/${workspace}/accounts`)).body.data[0].platform_id;
  for (let i = 0; i < PEOPLE; i++) await dm(`Person ${i}`);
  await eventually(async () => (await listedNames()).length === PEOPLE || undefined, 30_000);
  host = await HostServer.start(stack.gateway.url);
  browser = await launchChromium();
});
afterAll(async () => {
  await browser?.close();
  await host?.close();
  await stack?.stop();
});

/** Each person's id at the network, so that a person's second DM goes to the same conversation. */
const senders = new Map<string, string>();

async function dm(name: string) {
  const from = { name, ...(senders.has(name) ? { id: senders.get(name) } : {}) };
  const sent = await stack.sandboxControl<{ sender_id: string }>(
    'POST',
    `/__sandbox/pages/${pageId}/messages`,
    {
      from,
      text: `hi from ${name}`,
    },
  );
  senders.set(name, sent.sender_id);
}

/** The workspace's conversations as REST lists them, by the person's name, latest first. */
async function listedNames(): Promise<string[]> {
  const page = await call('GET', `/v1/conversations?workspace=${workspace}&archived=false&limit=200`);
  return (page.body.data as { contact: { name: string } }[]).map((c) => c.contact.name);
}

/** The conversations the widget shows, in order. */
const shown = (app: FrameLocator) => app.locator('button.conversation strong').allTextContents();

/** Waits until the widget shows exactly what REST lists (same conversations, same order). */
async function showsTheList(app: FrameLocator, count: number): Promise<string[]> {
  return eventually(async () => {
    const names = await shown(app);
    const listed = (await listedNames()).slice(0, count);
    if (names.length === count && JSON.stringify(names) === JSON.stringify(listed)) return names;
    throw new Error(`shown ${names.length}: ${names.join('|')}\nlisted: ${listed.join('|')}`);
  });
}

describe('the widget inbox past its first page', () => {
  // Guarantee: the inbox shows 50 conversations and "Show more" loads the rest by cursor; new
  // activity before and after that (a new person, a shown conversation, one loaded by "Show more")
  // moves that conversation to the front, and the widget never shows a conversation twice nor
  // drops one: it shows exactly the list REST answers.
  it('loads the next page by cursor and keeps the list whole under new activity', {
    timeout: 60_000,
  }, async () => {
    const minted = await call('POST', '/v1/embed-sessions', { workspace, allowed_origins: [host.origin] });
    const context = await browser.newContext({ viewport: { width: 320, height: 900 } });
    const page = await context.newPage();
    await page.goto(host.page(`inbox-paging-${Date.now()}`, { surface: 'inbox', token: minted.body.token }));
    const app = page.frameLocator('iframe');
    const more = app.getByRole('button', { name: 'Show more' });
    await more.waitFor();
    await showsTheList(app, 50);

    // Activity while the first page is shown: a new person, and one shown in the middle.
    await dm('Person 55');
    await dm('Person 40');
    await eventually(async () => {
      const names = await shown(app);
      return names[0] === 'Person 40' && names[1] === 'Person 55' ? true : undefined;
    });

    await more.click();
    const all = await showsTheList(app, PEOPLE + 1);
    expect(new Set(all).size).toBe(PEOPLE + 1);
    await expect(more.count()).resolves.toBe(0);

    // Activity on a conversation only "Show more" loaded: to the front, shown once.
    await dm('Person 1');
    const after = await eventually(async () => {
      const names = await shown(app);
      if (names[0] !== 'Person 1')
        throw new Error(`shown: ${names.slice(0, 5)}; listed: ${(await listedNames()).slice(0, 5)}`);
      return names;
    });
    expect(after).toHaveLength(PEOPLE + 1);
    expect(new Set(after).size).toBe(PEOPLE + 1);
    expect(after).toEqual(await listedNames());
    await context.close();
  });
});
