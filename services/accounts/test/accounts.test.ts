import { AccountsService, createClient } from '@svc/contracts';
import { parseKeyring, reseal } from '@svc/crypto';
import { metaJson, signatureHeaders, signedRequest } from '@svc/graph-sandbox';
import type { api } from '@svc/testing';
import {
  connectThroughLink,
  createUser,
  newLink,
  open,
  recordEvents,
  type SandboxUser,
  seen,
  trackedApi,
} from '@svc/testing';
import { type Stack, startStack } from '@svc/testing/stack';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { ExpirySweep } from '../src/expiry-sweep.ts';
import { sealedTokens } from '../src/token-vault.ts';

/**
 * Accounts after connect: the REST surface, refresh against a failing provider, expiry (token
 * errors and the sweeper), deauthorization, Meta's webhook endpoint, disconnects, workspace
 * deletion, the token vault and its key rotation, the per-IP limit, and no secret anywhere.
 */
const APP_SECRET = 'sandbox-app-secret-0123456789abcdef';
let stack: Stack;
let call: ReturnType<typeof api>;
let recorder: Awaited<ReturnType<typeof recordEvents>>;

beforeAll(async () => {
  stack = await startStack({ UNAUTHENTICATED_LIMIT_PER_MINUTE: '100000' });
  call = trackedApi(stack.gateway.url, (await stack.createPartner()).key);
  recorder = await recordEvents(stack.prefix);
});
afterAll(async () => {
  await recorder.close();
  await stack.stop();
});

interface AccountView {
  id: string;
  network: string;
  status: string;
  scopes: string[];
  last_error: string | null;
  platform_id: string;
}

/** A workspace with one connected page and its Instagram account. */
async function connected(pages: unknown[] = [{ name: 'Acme Bakery', instagram: { username: 'acme' } }]) {
  const user: SandboxUser = await createUser(stack, pages);
  const { url, workspaceId } = await newLink(call);
  await connectThroughLink(stack, url, 'page_network', { userId: user.user.id, decision: 'approve' });
  const list = await call('GET', `/v1/workspaces/${workspaceId}/accounts`);
  const accounts = list.body.data as AccountView[];
  const byNetwork = (n: string) => accounts.find((a) => a.network === n) as AccountView;
  return { user, url, workspaceId, page: byNetwork('page_network'), ig: byNetwork('photo_network') };
}

async function waitFor<T>(read: () => T, ok: (v: T) => boolean, ms = 5000): Promise<T> {
  const deadline = Date.now() + ms;
  while (!ok(read()) && Date.now() < deadline) await new Promise((r) => setTimeout(r, 50));
  return read();
}

/** The account as GET shows it, once `ok` holds (or after 5 s, for the assertion to report). */
async function accountWhen(id: string, ok: (a: AccountView) => boolean): Promise<AccountView> {
  const deadline = Date.now() + 5000;
  for (;;) {
    const account = (await call('GET', `/v1/accounts/${id}`)).body as AccountView;
    if (ok(account) || Date.now() > deadline) return account;
    await new Promise((r) => setTimeout(r, 50));
  }
}

const eventsFor = (type: string, accountId: string) =>
  recorder.ofType(type).filter((e) => (e.data.account as { id: string }).id === accountId);

describe('reading and refreshing accounts', () => {
  // Guarantee: list filters by network and status, pages, and refuses bad filter values naming the field.
  it('lists with filters and pagination', async () => {
    const { workspaceId } = await connected();
    const photo = await call('GET', `/v1/workspaces/${workspaceId}/accounts?network=photo_network`);
    expect(photo.body).toMatchObject({ total: 1, page: 1, limit: 50 });
    const paged = await call('GET', `/v1/workspaces/${workspaceId}/accounts?limit=1&page=2`);
    expect(paged.body.data).toHaveLength(1);
    expect(paged.body.total).toBe(2);
    const bad = await call('GET', `/v1/workspaces/${workspaceId}/accounts?status=sleepy`);
    expect(bad.body.error).toMatchObject({ code: 'validation_error', field: 'status' });
  });

  // Guarantee: refresh reads the network synchronously; a provider failure is 502 network_error with the provider's details.
  it('refreshes, and reports a provider failure as 502 with details', async () => {
    const { ig } = await connected();
    const ok = await call('POST', `/v1/accounts/${ig.id}/refresh`);
    expect(ok.status).toBe(200);
    expect(ok.body).toMatchObject({ id: ig.id, status: 'active', username: 'acme' });
    await stack.sandboxControl('POST', '/__sandbox/faults', {
      method: 'GET',
      path: `/${ig.platform_id}`,
      times: 1,
      status: 400,
      error: { code: 100, message: 'Unsupported get request.', error_subcode: 33 },
    });
    const failed = await call('POST', `/v1/accounts/${ig.id}/refresh`);
    expect(failed.status).toBe(502);
    expect(failed.body.error).toMatchObject({ code: 'network_error', details: { code: 100, subcode: 33 } });
    expect((await call('GET', `/v1/accounts/${ig.id}`)).body.status).toBe('active');
  });

  // Guarantee: a token that expired at the provider moves the account to expired with account.expired and data.error.
  it('moves an account to expired when the network says its token expired', async () => {
    const { user, page } = await connected();
    await stack.sandboxControl('POST', `/__sandbox/users/${user.user.id}/expire-tokens`);
    const refresh = await call('POST', `/v1/accounts/${page.id}/refresh`);
    expect(refresh.status).toBe(502);
    expect(refresh.body.error.details).toMatchObject({ code: 190, subcode: 463 });
    const account = (await call('GET', `/v1/accounts/${page.id}`)).body;
    expect(account.status).toBe('expired');
    expect(account.last_error).toContain('expired');
    const [event] = await waitFor(
      () => eventsFor('account.expired', page.id),
      (e) => e.length === 1,
    );
    expect(event?.data.error).toEqual(account.last_error);
    expect(event?.data.account).toEqual(account);
    const again = await call('POST', `/v1/accounts/${page.id}/refresh`);
    expect(again.status).toBe(502);
    expect(eventsFor('account.expired', page.id)).toHaveLength(1);
  });

  // Guarantee: the sweeper moves active accounts past token_expires_at to expired once, even when two replicas sweep at the same time.
  it('sweeps expired tokens once across replicas', async () => {
    const { page, ig } = await connected();
    await stack.accounts.pool.query(
      `UPDATE accounts SET token_expires_at = now() + interval '1 hour' WHERE id = ANY($1)`,
      [[page.id, ig.id]],
    );
    const { store, workspaces } = stack.accounts;
    const later = new ExpirySweep(store, workspaces, () => new Date(Date.now() + 2 * 3600_000));
    const swept = await Promise.all([later.run(), later.run()]);
    expect(swept[0] + swept[1]).toBeGreaterThanOrEqual(2);
    for (const id of [page.id, ig.id]) {
      expect((await call('GET', `/v1/accounts/${id}`)).body.status).toBe('expired');
      const events = await waitFor(
        () => eventsFor('account.expired', id),
        (e) => e.length === 1,
      );
      expect(events).toHaveLength(1);
      expect(events[0]?.data.error).toContain('expired on');
    }
  });
});

describe('deauthorization and Meta webhooks', () => {
  // Guarantee: the provider's signed deauthorize callback revokes the user's accounts: no token, empty scopes, last_error, account.disconnected with reason deauthorized.
  it('revokes on the deauthorize callback', async () => {
    const { user, page, ig } = await connected();
    const result = await stack.sandboxControl<{ deauthorize: { status: number } }>(
      'POST',
      `/__sandbox/users/${user.user.id}/deauthorize`,
    );
    expect(result.deauthorize.status).toBe(200);
    for (const id of [page.id, ig.id]) {
      const account = (await call('GET', `/v1/accounts/${id}`)).body;
      expect(account).toMatchObject({ status: 'revoked', scopes: [] });
      expect(account.last_error).toContain('deauthorized');
      const [event] = await waitFor(
        () => eventsFor('account.disconnected', id),
        (e) => e.length === 1,
      );
      expect(event?.data).toMatchObject({ reason: 'deauthorized', account });
    }
    const { rows } = await stack.accounts.pool.query('SELECT token FROM accounts WHERE id = ANY($1)', [
      [page.id, ig.id],
    ]);
    expect(rows.map((r) => r.token)).toEqual([null, null]);
    const refresh = await call('POST', `/v1/accounts/${page.id}/refresh`);
    expect(refresh.body.error.code).toBe('account_disconnected');
  });

  // Guarantee: forged or unsigned deauthorize calls are refused (403/401) and change nothing.
  it('refuses forged and unsigned deauthorize calls', async () => {
    const { user, page } = await connected();
    const post = (body: string) =>
      fetch(`${stack.gateway.url}/webhooks/meta/deauthorize`, {
        method: 'POST',
        headers: { 'content-type': 'application/x-www-form-urlencoded' },
        body,
      });
    const forged = signedRequest('not-the-app-secret-at-all', {
      algorithm: 'HMAC-SHA256',
      user_id: user.user.id,
    });
    expect((await post(`signed_request=${forged}`)).status).toBe(403);
    expect((await post('')).status).toBe(401);
    expect((await call('GET', `/v1/accounts/${page.id}`)).body.status).toBe('active');
  });

  // Guarantee: the webhook handshake answers the configured verify token only.
  it('answers the subscription handshake', async () => {
    const verified = await stack.sandboxControl<{ status: number; body: string }>(
      'POST',
      '/__sandbox/webhooks/verify',
      {},
    );
    expect(verified).toMatchObject({ status: 200 });
    const wrong = await fetch(
      `${stack.gateway.url}/webhooks/meta?hub.mode=subscribe&hub.verify_token=nope&hub.challenge=42`,
    );
    expect(wrong.status).toBe(403);
  });

  // Guarantee: webhook POSTs are verified over the raw bytes (unsigned 401, forged 403), and a verified permissions change reaches the accounts at once.
  it('verifies webhook signatures and applies permission revocations', async () => {
    const { user, ig } = await connected();
    const body = metaJson({
      object: 'permissions',
      entry: [
        {
          id: user.user.id,
          time: 1,
          changes: [{ field: 'instagram_content_publish', value: { verb: 'revoked' } }],
        },
      ],
    });
    const send = (headers: Record<string, string>) =>
      fetch(`${stack.gateway.url}/webhooks/meta`, {
        method: 'POST',
        headers: { 'content-type': 'application/json', ...headers },
        body,
      });
    expect((await send({})).status).toBe(401);
    expect((await send(signatureHeaders('wrong-secret-0123456789', body))).status).toBe(403);
    expect((await call('GET', `/v1/accounts/${ig.id}`)).body.status).toBe('active');
    const accepted = await send(signatureHeaders(APP_SECRET, body));
    expect(accepted.status).toBe(200);
    const current = await accountWhen(ig.id, (a) => a.status === 'error');
    expect(current.status).toBe('error');
    expect(current.scopes).not.toContain('instagram_content_publish');
    expect(current.last_error).toContain('instagram_content_publish');
  });

  // Guarantee: an inbound DM from the sandbox, signed by Meta's rules, is accepted with 200.
  it('accepts signed message webhooks from the sandbox', async () => {
    const { ig } = await connected();
    const sent = await stack.sandboxControl<{ webhook: { status: number } }>(
      'POST',
      `/__sandbox/instagram/${ig.platform_id}/messages`,
      { from: { username: 'jane.doe' }, text: 'Open on Sunday? ä/ö' },
    );
    expect(sent.webhook.status).toBe(200);
  });
});

describe('disconnecting', () => {
  // Guarantee: DELETE /v1/accounts/:id removes token and metadata (404 afterwards) and emits account.disconnected.
  it('disconnects through the API', async () => {
    const { page } = await connected();
    expect((await call('DELETE', `/v1/accounts/${page.id}`)).status).toBe(204);
    expect((await call('GET', `/v1/accounts/${page.id}`)).status).toBe(404);
    const [event] = await waitFor(
      () => eventsFor('account.disconnected', page.id),
      (e) => e.length === 1,
    );
    expect(event?.data.account).toMatchObject({ id: page.id, status: 'disconnected', scopes: [] });
    expect((await call('DELETE', `/v1/accounts/${page.id}`)).status).toBe(404);
  });

  // Guarantee: the hosted page's Disconnect button disconnects and emits account.disconnected.
  it('disconnects from the hosted page', async () => {
    const { url, ig } = await connected();
    const answer = await open(`${url}/accounts/${ig.id}/disconnect`, { method: 'POST' });
    expect(answer.status).toBe(303);
    const page = await open(new URL(answer.location, stack.gateway.url).toString());
    expect(page.body).toContain('The account was disconnected.');
    expect(page.body).not.toContain(ig.id);
    await waitFor(
      () => eventsFor('account.disconnected', ig.id),
      (e) => e.length === 1,
    );
  });

  // Guarantee: deleting the workspace disconnects every account and leaves no account, token, link or state row behind.
  it('purges everything on workspace deletion', async () => {
    const { workspaceId, page, ig } = await connected();
    expect((await call('DELETE', `/v1/workspaces/${workspaceId}`)).status).toBe(204);
    await waitFor(
      () => [...eventsFor('account.disconnected', page.id), ...eventsFor('account.disconnected', ig.id)],
      (e) => e.length === 2,
    );
    const count = async (table: string, column = 'workspace_id') =>
      Number(
        (await stack.accounts.pool.query(`SELECT count(*) FROM ${table} WHERE ${column} = $1`, [workspaceId]))
          .rows[0].count,
      );
    expect(await count('accounts')).toBe(0);
    expect(await count('connect_links')).toBe(0);
    const orphanStates = await stack.accounts.pool.query(
      'SELECT count(*) FROM oauth_states s WHERE NOT EXISTS (SELECT 1 FROM connect_links l WHERE l.id = s.link_id)',
    );
    expect(Number(orphanStates.rows[0].count)).toBe(0);
  });
});

describe('the token vault', () => {
  // Guarantee: only services presenting a vault credential get a token; the gateway's own calls cannot.
  it('hands tokens to publishing and inbox only', async () => {
    const { page } = await connected();
    const address = `127.0.0.1:${stack.accounts.port}`;
    const anonymous = createClient(AccountsService, address);
    await expect(anonymous.getAccountToken({ accountId: page.id })).rejects.toMatchObject({
      code: 'forbidden',
    });
    const wrong = createClient(AccountsService, address, { credential: 'guess' });
    await expect(wrong.getAccountToken({ accountId: page.id })).rejects.toMatchObject({ code: 'forbidden' });
    const publishing = createClient(AccountsService, address, { credential: 'development-vault-publishing' });
    const answer = await publishing.getAccountToken({ accountId: page.id });
    expect(answer.token).toMatch(/^EAA/);
    expect(answer.account?.id).toBe(page.id);
    for (const client of [anonymous, wrong, publishing]) client.close();
  });

  // Guarantee: tokens are sealed with a key id; after a new key is put first, rotation re-seals them and they still open.
  it('re-encrypts tokens with a rotated key', async () => {
    const { page } = await connected();
    const before = (await stack.accounts.pool.query('SELECT token FROM accounts WHERE id = $1', [page.id]))
      .rows[0];
    expect(before.token).toMatch(/^v1\.dev1\./);
    expect(before.token).not.toContain('EAA');
    const next = parseKeyring(
      `k2:${Buffer.alloc(32, 9).toString('base64')},dev1:${Buffer.alloc(32, 7).toString('base64')}`,
    );
    const tokens = sealedTokens(stack.accounts.prisma);
    const first = await reseal(next, tokens);
    expect(first.resealed).toBeGreaterThanOrEqual(1);
    expect(first).toMatchObject({ keyId: 'k2', left: 0 });
    expect(await reseal(next, tokens)).toMatchObject({ resealed: 0, left: 0 });
    const after = (await stack.accounts.pool.query('SELECT token FROM accounts WHERE id = $1', [page.id]))
      .rows[0];
    expect(after.token).toMatch(/^v1\.k2\./);
    const key = `${(await call('GET', `/v1/accounts/${page.id}`)).body.workspace}:page_network:${page.platform_id}`;
    expect(next.decrypt(after.token, key)).toMatch(/^EAA/);
  });
});

describe('unauthenticated endpoints', () => {
  // Guarantee: 60 requests per minute per IP on the hosted pages; the 61st gets a 429 page with Retry-After.
  it('limits the hosted pages per IP address', async () => {
    const gateway = await stack.startGateway({
      REDIS_PREFIX: `${stack.prefix}:ip-test:`,
      UNAUTHENTICATED_LIMIT_PER_MINUTE: '60',
    });
    const statuses: number[] = [];
    for (let i = 0; i < 61; i++) statuses.push((await fetch(`${gateway.url}/connect/cnt_unknown`)).status);
    expect(statuses.slice(0, 60).every((s) => s === 404)).toBe(true);
    const limited = await fetch(`${gateway.url}/connect/oauth/callback?state=x`);
    expect(limited.status).toBe(429);
    expect(Number(limited.headers.get('retry-after'))).toBeGreaterThanOrEqual(1);
    expect(limited.headers.get('content-type')).toContain('text/html');
    expect(await limited.text()).toContain('Too many requests');
  });
});

describe('secrets', () => {
  // Guarantee: no network token, API key or signing secret appears in any log line, API response, page or event of this suite.
  it('never shows a token or secret', () => {
    const logs = JSON.stringify(stack.logs);
    const everything = [logs, ...seen, JSON.stringify(recorder.events)].join('\n');
    // The sandbox's tokens are EAA + 96 base62 characters (Meta's are longer still): a shorter
    // pattern also matched random ids and OAuth states now and then.
    expect(everything).not.toMatch(/EAA[A-Za-z0-9]{90}/);
    expect(everything).not.toMatch(/svc_live_[A-Za-z0-9]{10}/);
    expect(everything).not.toContain(APP_SECRET);
    expect(everything).not.toContain('development-vault-publishing');
    expect(stack.logs.length).toBeGreaterThan(10);
  });
});
