import { api, CookieJar, consent, createUser } from '@svc/testing';
import { type Stack, startStack } from '@svc/testing/stack';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { bindingCookie } from '../src/connect/browser-binding.ts';

/**
 * The OAuth `state` of the hosted connect flow is bound to the browser that started it (issue 23,
 * item 8): a consent URL made for one connect link and sent to someone else must not connect that
 * person's Pages to the sender's workspace. Walked over HTTP with the sandbox's consent, each
 * browser being its own cookie jar.
 */
let stack: Stack;
let partner: ReturnType<typeof api>;

beforeAll(async () => {
  // A generous per-IP budget: every page of these flows counts against it.
  stack = await startStack({ UNAUTHENTICATED_LIMIT_PER_MINUTE: '100000' });
  partner = api(stack.gateway.url, (await stack.createPartner()).key);
});
afterAll(() => stack.stop());

const ONE_PAGE = [{ name: 'Victim Bakery', instagram: { username: 'victimbakery' } }];

async function linkOfNewWorkspace(): Promise<{ url: string; workspaceId: string }> {
  const workspace = await partner('POST', '/v1/workspaces', { name: 'Sender workspace' });
  const link = await partner('POST', `/v1/workspaces/${workspace.body.id}/connect-links`, {});
  expect(link.status).toBe(201);
  return { url: link.body.url, workspaceId: workspace.body.id };
}

/** `browser` opens the link's start; answers the consent dialog URL the 302 points to, and the response. */
async function startIn(browser: CookieJar, linkUrl: string) {
  const started = await browser.fetch(`${linkUrl}/page_network/start`);
  expect(started.status).toBe(302);
  return { dialog: new URL(started.headers.get('location') ?? ''), started };
}

const accountCount = async (workspaceId: string) =>
  (await partner('GET', `/v1/workspaces/${workspaceId}/accounts`)).body.total as number;

describe('the OAuth state is bound to the browser that started the flow', () => {
  // Guarantee: /start sets the binding cookie HttpOnly, SameSite=Lax, scoped to the callback's path,
  // holding a nonce that appears nowhere in the consent URL (it cannot be read off the state).
  it('sets a path-scoped HttpOnly Lax cookie whose value is not in the consent URL', async () => {
    const { url } = await linkOfNewWorkspace();
    const { dialog, started } = await startIn(new CookieJar(), url);
    const binding = started.headers.getSetCookie().find((c) => c.startsWith('svc_connect_browser_'));
    expect(binding).toBeDefined();
    const attributes = (binding ?? '').split(';').map((a) => a.trim());
    expect(attributes).toEqual(
      expect.arrayContaining(['Path=/connect/oauth/callback', 'HttpOnly', 'SameSite=Lax']),
    );
    // The stack's public base URL is http: no Secure (the browser would drop the cookie).
    expect(attributes).not.toContain('Secure');
    const nonce = (attributes[0] ?? '').split('=')[1] ?? '';
    expect(nonce.length).toBeGreaterThanOrEqual(32);
    expect(dialog.toString()).not.toContain(nonce);
  });

  // Guarantee: when the public base URL is https, the binding cookie is Secure and scoped to the
  // callback's path under that base.
  it('marks the cookie Secure when the public base URL is https', () => {
    const cookie = bindingCookie({
      state: 'abc.def',
      browserNonce: 'n'.repeat(32),
      callbackUrl: 'https://api.partner.example/social/connect/oauth/callback',
      stateTtlSeconds: 900,
    });
    expect(cookie.split('; ')).toEqual(
      expect.arrayContaining([
        'Path=/social/connect/oauth/callback',
        'Max-Age=900',
        'HttpOnly',
        'SameSite=Lax',
        'Secure',
      ]),
    );
  });

  // Guarantee: a consent URL started in one browser and completed in another (no binding cookie, or
  // another browser's nonce) is refused with a 400 page that says to open the link again in this
  // browser, and connects nothing; the refused state is spent, so the starting browser cannot replay
  // that callback either.
  it('refuses the callback in another browser and connects nothing', async () => {
    const victim = await createUser(stack, ONE_PAGE);
    const { url, workspaceId } = await linkOfNewWorkspace();
    const sender = new CookieJar();
    const { dialog } = await startIn(sender, url);
    // The sender passes the consent URL on; the victim approves in their own browser.
    const callback = await consent(stack, dialog, { userId: victim.user.id, decision: 'approve' });

    const victimBrowser = new CookieJar();
    const refused = await victimBrowser.fetch(callback);
    expect(refused.status).toBe(400);
    expect(refused.headers.get('content-type')).toContain('text/html');
    const page = await refused.text();
    expect(page).toContain('The connection did not work');
    expect(page).toContain('different browser');
    expect(page).toContain('Open the connect link again in this browser');
    expect(page).toContain('/assets/connect.css');
    expect(await accountCount(workspaceId)).toBe(0);

    const replay = await sender.fetch(callback);
    expect(replay.status).toBe(400);
    expect(await replay.text()).toContain('already completed');
    expect(await accountCount(workspaceId)).toBe(0);
  });

  // Guarantee: another browser's own binding nonce, presented under this flow's cookie name, is refused.
  it("refuses another browser's nonce", async () => {
    const victim = await createUser(stack, ONE_PAGE);
    const { url, workspaceId } = await linkOfNewWorkspace();
    const sender = new CookieJar();
    const { dialog } = await startIn(sender, url);
    const callback = await consent(stack, dialog, { userId: victim.user.id, decision: 'approve' });

    const other = new CookieJar();
    const { started: otherStart } = await startIn(other, (await linkOfNewWorkspace()).url);
    const otherNonce = otherStart.headers
      .getSetCookie()
      .find((c) => c.startsWith('svc_connect_browser_'))
      ?.split(';')[0]
      ?.split('=')[1];
    const senderCookieName =
      sender
        .header(callback)
        .split('; ')
        .find((c) => c.startsWith('svc_connect_browser_'))
        ?.split('=')[0] ?? '';
    expect(senderCookieName).toMatch(/^svc_connect_browser_/);
    const refused = await other.fetch(callback, { headers: { cookie: `${senderCookieName}=${otherNonce}` } });
    expect(refused.status).toBe(400);
    expect(await refused.text()).toContain('Open the connect link again in this browser');
    expect(await accountCount(workspaceId)).toBe(0);
  });

  // Guarantee: the browser that started the flow still connects, even with a second flow started in
  // another tab of the same browser meanwhile (each flow has its own cookie).
  it('connects in the browser that started it, with two flows in two tabs', async () => {
    const user = await createUser(stack, ONE_PAGE);
    const { url, workspaceId } = await linkOfNewWorkspace();
    const browser = new CookieJar();
    const first = await startIn(browser, url);
    const second = await startIn(browser, url);
    // Each flow has its own binding cookie, sent to the callback only.
    expect(
      browser.header(`${stack.gateway.url}/connect/oauth/callback`).match(/svc_connect_browser_/g),
    ).toHaveLength(2);
    expect(browser.header(url)).not.toContain('svc_connect_browser_');
    const firstBack = await consent(stack, first.dialog, { userId: user.user.id, decision: 'approve' });
    const secondBack = await consent(stack, second.dialog, { userId: user.user.id, decision: 'approve' });

    const connected = await browser.fetch(firstBack);
    expect(connected.status).toBe(200);
    expect(await connected.text()).toContain('Accounts connected');
    expect(await accountCount(workspaceId)).toBe(2);
    const again = await browser.fetch(secondBack);
    expect(again.status).toBe(200);
    expect(await again.text()).toContain('Accounts connected');
    // The spent flow's cookie is dropped at its callback.
    expect(browser.header(firstBack)).not.toContain('svc_connect_browser_');
  });
});
