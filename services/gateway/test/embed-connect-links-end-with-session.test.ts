import { api, CookieJar, consent, createUser } from '@svc/testing';
import { type Stack, startStack } from '@svc/testing/stack';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';

/**
 * Connect links minted by the widget (`POST /v1/embed/connect`) are bound to their embed session
 * (issue 23, item 14): they expire no later than the session, and ending or expiring the session
 * ends them on the connect page, at start and at the OAuth callback.
 */
let stack: Stack;
let partner: ReturnType<typeof api>;
let workspace: string;

beforeAll(async () => {
  stack = await startStack({ UNAUTHENTICATED_LIMIT_PER_MINUTE: '100000' });
  partner = api(stack.gateway.url, (await stack.createPartner()).key);
  workspace = (await partner('POST', '/v1/workspaces', { name: 'Widget workspace' })).body.id;
});
afterAll(() => stack.stop());

async function mintSession(expiresIn = 3600) {
  const res = await partner('POST', '/v1/embed-sessions', {
    workspace,
    allowed_origins: ['https://app.partner.example'],
    expires_in: expiresIn,
  });
  expect(res.status).toBe(201);
  return res.body as { id: string; token: string; expires_at: string };
}

/** The popup URL the widget gets (…/connect/<token>/page_network/start) and its link's page URL. */
async function widgetConnect(token: string) {
  const res = await api(stack.gateway.url, token)('POST', '/v1/embed/connect', { network: 'page_network' });
  expect(res.status).toBe(201);
  const startUrl = res.body.url as string;
  return { startUrl, pageUrl: startUrl.replace(/\/page_network\/start$/, '') };
}

const accountCount = async () =>
  (await partner('GET', `/v1/workspaces/${workspace}/accounts`)).body.total as number;

describe('widget connect links end with their embed session', () => {
  // Guarantee: a widget link never outlives its session: its expiry is at most the session's.
  it("expires no later than the session's expiry", async () => {
    const session = await mintSession(120);
    await widgetConnect(session.token);
    const { rows } = await stack.accounts.pool.query<{ expires_at: Date }>(
      'SELECT expires_at FROM connect_links WHERE embed_session_id = $1',
      [session.id],
    );
    expect(rows).toHaveLength(1);
    expect(rows[0]?.expires_at.getTime()).toBeLessThanOrEqual(Date.parse(session.expires_at));
  });

  // Guarantee: ending the session (DELETE /v1/embed-sessions/:id) ends its links: the page answers
  // as an expired link (410), start refuses, and a consent already under way connects nothing.
  it('ends the links when the session is ended', async () => {
    const session = await mintSession();
    const { startUrl, pageUrl } = await widgetConnect(session.token);
    const browser = new CookieJar();
    expect((await browser.fetch(pageUrl)).status).toBe(200);
    const started = await browser.fetch(startUrl);
    expect(started.status).toBe(302);
    const user = await createUser(stack, [{ name: 'Popup Page' }]);
    const callback = await consent(stack, new URL(started.headers.get('location') ?? ''), {
      userId: user.user.id,
      decision: 'approve',
    });

    expect((await partner('DELETE', `/v1/embed-sessions/${session.id}`)).status).toBe(204);

    const page = await browser.fetch(pageUrl);
    expect(page.status).toBe(410);
    expect(await page.text()).toContain('This link has expired');
    const refusedStart = await browser.fetch(startUrl);
    expect(refusedStart.status).toBe(410);
    expect(refusedStart.headers.get('location')).toBeNull();
    const refusedCallback = await browser.fetch(callback);
    expect(refusedCallback.status).toBe(400);
    expect(await refusedCallback.text()).toContain('has ended, so nothing was connected');
    expect(await accountCount()).toBe(0);
  });

  // Guarantee: a session that expires ends its links the same way.
  it('ends the links when the session expires', async () => {
    const session = await mintSession();
    const { startUrl, pageUrl } = await widgetConnect(session.token);
    expect((await fetch(pageUrl)).status).toBe(200);
    await stack.identity.prisma.embedSession.update({
      where: { id: session.id },
      data: { expiresAt: new Date(Date.now() - 1_000) },
    });
    expect((await fetch(pageUrl)).status).toBe(410);
    expect((await fetch(startUrl, { redirect: 'manual' })).status).toBe(410);
  });

  // Guarantee: links made over REST are not tied to any session and keep working.
  it('leaves links made over REST alone', async () => {
    const link = await partner('POST', `/v1/workspaces/${workspace}/connect-links`, {});
    expect((await fetch(link.body.url)).status).toBe(200);
    expect((await fetch(`${link.body.url}/page_network/start`, { redirect: 'manual' })).status).toBe(302);
  });
});
