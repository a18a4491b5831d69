import type { api } from '@svc/testing';
import {
  connectThroughLink,
  consent,
  createUser,
  newLink,
  open,
  recordEvents,
  start,
  trackedApi,
} from '@svc/testing';
import { type Stack, startStack } from '@svc/testing/stack';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';

/**
 * The hosted connect flow end to end: a connect link, the page, the consent dialog of the
 * graph-sandbox over HTTP, our OAuth callback, the accounts it creates and the events on NATS.
 */
let stack: Stack;
let call: ReturnType<typeof api>;
let recorder: Awaited<ReturnType<typeof recordEvents>>;
let partnerKey: string;

beforeAll(async () => {
  // A generous per-IP budget: this file makes many page requests; the limit has its own test.
  stack = await startStack({ UNAUTHENTICATED_LIMIT_PER_MINUTE: '100000' });
  partnerKey = (await stack.createPartner()).key;
  call = trackedApi(stack.gateway.url, partnerKey);
  recorder = await recordEvents(stack.prefix);
});
afterAll(async () => {
  await recorder.close();
  await stack.stop();
});

const ONE_PAGE = [{ name: 'Acme Bakery', instagram: { username: 'acmebakery' } }];

async function eventually<T>(read: () => Promise<T> | T, ok: (value: T) => boolean, ms = 5000): Promise<T> {
  const deadline = Date.now() + ms;
  for (;;) {
    const value = await read();
    if (ok(value) || Date.now() > deadline) return value;
    await new Promise((r) => setTimeout(r, 50));
  }
}

describe('connect links', () => {
  // Guarantee: the link is created for the workspace with its networks, expiry and redirect, and the page shows the workspace.
  it('creates a link whose page names the workspace and offers each network', async () => {
    const { url, link } = await newLink(call, { redirect_url: 'https://partner.example/done' });
    expect(link).toMatchObject({
      networks: ['page_network', 'photo_network'],
      redirect_url: 'https://partner.example/done',
    });
    expect(Date.parse(link.expires_at) - Date.now()).toBeGreaterThan(23 * 3600_000);
    const page = await open(url);
    expect(page.status).toBe(200);
    expect(page.response.headers.get('content-type')).toContain('text/html');
    expect(page.response.headers.get('content-security-policy')).toContain("default-src 'none'");
    expect(page.body).toContain('Acme Bakery HQ');
    expect(page.body).toContain('/page_network/start');
    expect(page.body).toContain('/photo_network/start');
    expect((await open(url.replace('/connect/', '/v1/connect/'))).status).toBe(200);
  });

  // Guarantee: redirect_url must be https (http only on localhost) and networks must be known, with the field named.
  it('refuses a bad redirect_url or network with validation_error naming the field', async () => {
    const ws = await call('POST', '/v1/workspaces', { name: 'w' });
    const path = `/v1/workspaces/${ws.body.id}/connect-links`;
    const http = await call('POST', path, { redirect_url: 'http://partner.example/x' });
    expect(http.status).toBe(400);
    expect(http.body.error).toMatchObject({ code: 'validation_error', field: 'redirect_url' });
    expect((await call('POST', path, { redirect_url: 'http://localhost:3000/back' })).status).toBe(201);
    const net = await call('POST', path, { networks: ['fax_network'] });
    expect(net.body.error).toMatchObject({ code: 'validation_error', field: 'networks.0' });
  });

  // Guarantee: an expired link explains itself (410) on the page and on start; an unknown one is a 404 page.
  it('explains expired and unknown links', async () => {
    const { url } = await newLink(call, { expires_in: 60 });
    await stack.accounts.pool.query(`UPDATE connect_links SET expires_at = now() - interval '1 second'`);
    const expired = await open(url);
    expect(expired.status).toBe(410);
    expect(expired.body).toContain('expired');
    expect((await open(`${url}/page_network/start`)).status).toBe(410);
    const unknown = await open(`${stack.gateway.url}/connect/cnt_nope`);
    expect(unknown.status).toBe(404);
    expect(unknown.body).toContain('not valid');
  });
});

describe('the OAuth flow', () => {
  // Guarantee: a page with a linked Instagram account yields two active accounts, two account.connected events shaped like GET /v1/accounts/:id, and a 302 back to the partner with status and ids.
  it('connects a page and its Instagram account', async () => {
    const user = await createUser(stack, ONE_PAGE);
    const { url, workspaceId } = await newLink(call, { redirect_url: 'https://partner.example/done?x=1' });
    const dialog = await start(url, 'page_network');
    expect(dialog.pathname).toBe('/v25.0/dialog/oauth');
    expect(dialog.searchParams.get('scope')).toContain('pages_manage_posts');
    expect(dialog.searchParams.get('redirect_uri')).toBe(`${stack.gateway.url}/connect/oauth/callback`);
    const back = await open(await consent(stack, dialog, { userId: user.user.id, decision: 'approve' }));
    expect(back.status).toBe(302);
    const partner = new URL(back.location);
    expect(partner.origin + partner.pathname).toBe('https://partner.example/done');
    expect(partner.searchParams.get('x')).toBe('1');
    expect(partner.searchParams.get('status')).toBe('connected');
    const ids = partner.searchParams.get('accounts')?.split(',') ?? [];
    expect(ids).toHaveLength(2);

    const list = await call('GET', `/v1/workspaces/${workspaceId}/accounts`);
    expect(list.body.total).toBe(2);
    const byNetwork = Object.fromEntries(list.body.data.map((a: { network: string }) => [a.network, a]));
    const page = user.pages[0];
    expect(byNetwork.page_network).toMatchObject({
      platform_id: page?.id,
      page_id: page?.id,
      display_name: 'Acme Bakery',
      status: 'active',
      last_error: null,
      token_expires_at: null,
    });
    expect(byNetwork.photo_network).toMatchObject({
      platform_id: page?.instagram?.id,
      page_id: page?.id,
      username: 'acmebakery',
      status: 'active',
    });
    expect(byNetwork.photo_network.scopes).toContain('instagram_content_publish');
    expect(JSON.stringify(list.body)).not.toMatch(/EAA[A-Za-z0-9]{90}/);

    const events = await eventually(
      () => recorder.ofType('account.connected').filter((e) => e.workspace === workspaceId),
      (e) => e.length === 2,
    );
    expect(events).toHaveLength(2);
    for (const event of events) {
      const account = event.data.account as { id: string };
      const current = await call('GET', `/v1/accounts/${account.id}`);
      expect(event.data.account).toEqual(current.body);
      expect(event).toMatchObject({ partner: expect.any(String), workspace: workspaceId, external_id: null });
    }
  });

  // Guarantee: connecting the same accounts again updates them (token, scopes, status back to active) instead of duplicating.
  it('reconnects without duplicates', async () => {
    const user = await createUser(stack, ONE_PAGE);
    const { url, workspaceId } = await newLink(call);
    await connectThroughLink(stack, url, 'page_network', { userId: user.user.id, decision: 'approve' });
    const first = await call('GET', `/v1/workspaces/${workspaceId}/accounts`);
    await stack.accounts.pool.query(
      `UPDATE accounts SET status = 'expired', last_error = 'x' WHERE workspace_id = $1`,
      [workspaceId],
    );
    const again = await connectThroughLink(stack, url, 'page_network', {
      userId: user.user.id,
      decision: 'approve',
    });
    expect(again.status).toBe(200);
    expect(again.body).toContain('Accounts connected');
    const second = await call('GET', `/v1/workspaces/${workspaceId}/accounts`);
    expect(second.body.total).toBe(2);
    expect(second.body.data.map((a: { id: string }) => a.id)).toEqual(
      first.body.data.map((a: { id: string }) => a.id),
    );
    expect(second.body.data.every((a: { status: string }) => a.status === 'active')).toBe(true);
  });

  // Guarantee: Deny connects nothing and says so; with a redirect_url the partner learns status=denied.
  it('handles the user denying consent', async () => {
    const { url, workspaceId } = await newLink(call);
    const denied = await connectThroughLink(stack, url, 'page_network', { decision: 'deny' });
    expect(denied.status).toBe(200);
    expect(denied.body).toContain('Nothing was connected');
    expect((await call('GET', `/v1/workspaces/${workspaceId}/accounts`)).body.total).toBe(0);
    const withRedirect = await newLink(call, { redirect_url: 'https://partner.example/r' });
    const back = await connectThroughLink(stack, withRedirect.url, 'photo_network', { decision: 'deny' });
    expect(new URL(back.location).searchParams.get('status')).toBe('denied');
  });

  // Guarantee: a forged, reused or missing state is refused with a clear page and changes nothing.
  it('refuses forged, reused and missing state', async () => {
    const user = await createUser(stack, ONE_PAGE);
    const { url, workspaceId } = await newLink(call);
    const dialog = await start(url, 'page_network');
    const callback = new URL(await consent(stack, dialog, { userId: user.user.id, decision: 'approve' }));
    const state = callback.searchParams.get('state') ?? '';

    const forged = new URL(callback);
    forged.searchParams.set('state', `${state.split('.')[0]}.AAAA`);
    const forgedPage = await open(forged.toString());
    expect(forgedPage.status).toBe(400);
    expect(forgedPage.body).toContain('we did not issue');

    const missing = new URL(callback);
    missing.searchParams.delete('state');
    expect((await open(missing.toString())).body).toContain('without its security code');
    expect((await call('GET', `/v1/workspaces/${workspaceId}/accounts`)).body.total).toBe(0);

    expect((await open(callback.toString())).status).toBe(200);
    const reused = await open(callback.toString());
    expect(reused.status).toBe(400);
    expect(reused.body).toContain('already completed');
    expect((await call('GET', `/v1/workspaces/${workspaceId}/accounts`)).body.total).toBe(2);
  });

  // Guarantee: an expired state (the user took too long) is refused.
  it('refuses an expired state', async () => {
    const user = await createUser(stack, ONE_PAGE);
    const { url } = await newLink(call);
    const dialog = await start(url, 'page_network');
    const callback = await consent(stack, dialog, { userId: user.user.id, decision: 'approve' });
    await stack.accounts.pool.query(`UPDATE oauth_states SET expires_at = now() - interval '1 second'`);
    const page = await open(callback);
    expect(page.status).toBe(400);
    expect(page.body).toContain('expired');
  });

  // Guarantee: several granted pages lead to a picker first, and only the chosen page is connected.
  it('offers a page picker when several pages were granted', async () => {
    const user = await createUser(stack, [
      { name: 'North Shop', instagram: { username: 'northshop' } },
      { name: 'South Shop', instagram: { username: 'southshop' } },
    ]);
    const { url, workspaceId } = await newLink(call);
    const picker = await connectThroughLink(stack, url, 'page_network', {
      userId: user.user.id,
      decision: 'approve',
    });
    expect(picker.status).toBe(200);
    expect(picker.body).toContain('Choose the Pages to connect');
    expect(picker.body).toContain('North Shop');
    expect(picker.body).toContain('South Shop');
    const choiceId = /name="choice_id" value="([^"]+)"/.exec(picker.body)?.[1] ?? '';
    const south = user.pages[1]?.id ?? '';
    const post = (ids: string[]) =>
      open(`${stack.gateway.url}/connect/oauth/pages`, {
        method: 'POST',
        headers: { 'content-type': 'application/x-www-form-urlencoded' },
        body: new URLSearchParams([
          ['choice_id', choiceId],
          ...ids.map((id): [string, string] => ['page_id', id]),
        ]).toString(),
      });
    const none = await post([]);
    expect(none.body).toContain('Select at least one Page');
    const result = await post([south]);
    expect(result.status).toBe(200);
    expect(result.body).toContain('@southshop');
    const accounts = await call('GET', `/v1/workspaces/${workspaceId}/accounts`);
    expect(accounts.body.data.map((a: { page_id: string }) => a.page_id)).toEqual([south, south]);
    expect((await post([south])).body).toContain('already made');
  });

  // Guarantee: a grant without the publishing/messaging scopes is recorded as status error with last_error naming them, and the page says how to fix it.
  it('names missing permissions at connect time', async () => {
    const user = await createUser(stack, ONE_PAGE);
    const { url, workspaceId } = await newLink(call);
    const page = await connectThroughLink(stack, url, 'photo_network', {
      userId: user.user.id,
      decision: 'approve',
      scopes: ['pages_show_list', 'pages_read_engagement', 'instagram_basic', 'instagram_manage_comments'],
    });
    expect(page.status).toBe(200);
    expect(page.body).toContain('instagram_content_publish (to publish posts)');
    expect(page.body).toContain('instagram_manage_messages');
    const [account] = (await call('GET', `/v1/workspaces/${workspaceId}/accounts`)).body.data;
    expect(account).toMatchObject({ network: 'photo_network', status: 'error' });
    expect(account.last_error).toContain('instagram_content_publish');
    expect((await call('GET', `/v1/workspaces/${workspaceId}/accounts?status=error`)).body.total).toBe(1);
  });

  // Guarantee: photo_network with a page that has no linked Instagram account says exactly that and connects nothing.
  it('explains a page without a linked Instagram account', async () => {
    const user = await createUser(stack, [{ name: 'Plain Page' }]);
    const { url, workspaceId } = await newLink(call);
    const page = await connectThroughLink(stack, url, 'photo_network', {
      userId: user.user.id,
      decision: 'approve',
    });
    expect(page.status).toBe(400);
    expect(page.body).toContain('has no linked Instagram professional account');
    expect((await call('GET', `/v1/workspaces/${workspaceId}/accounts`)).body.total).toBe(0);
  });
});
