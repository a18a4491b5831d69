import { GraphApiError, parseSignedRequest } from '@svc/graph-client';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { ALL_SCOPES, APP_SECRET, connectUser, failure, type Harness, startHarness } from './harness.ts';

let h: Harness;
beforeAll(async () => {
  h = await startHarness({ shortTokenTtlS: 3600, longTokenTtlS: 5_184_000 });
});
afterAll(() => h.close());

describe('Facebook Login against the sandbox', () => {
  // Guarantee: the dialog URL the product builds is the one Meta documents (version, client_id, scope list, state).
  it('builds the dialog URL from config', () => {
    const url = new URL(
      h.client.oauth.dialogUrl({
        redirectUri: 'https://app/cb',
        state: 'abc',
        scopes: ['pages_show_list', 'instagram_basic'],
      }),
    );
    expect(url.pathname).toBe('/v25.0/dialog/oauth');
    expect(url.searchParams.get('client_id')).toBe(h.client.config.appId);
    expect(url.searchParams.get('scope')).toBe('pages_show_list,instagram_basic');
    expect(url.searchParams.get('state')).toBe('abc');
  });

  // Guarantee: code → short token → long token → pages with page tokens and the linked Instagram account, and debug_token reports the grant.
  it('completes the login and lists pages with tokens and instagram_business_account', async () => {
    const c = await connectUser(h);
    expect((await h.client.accounts.me(c.userToken)).id).toBe(c.userId);
    const info = await h.client.oauth.debugToken(c.pageToken);
    expect(info).toMatchObject({ is_valid: true, type: 'PAGE', expires_at: 0, profile_id: c.pageId });
    const userInfo = await h.client.oauth.debugToken(c.userToken);
    expect(userInfo.scopes).toEqual(expect.arrayContaining(ALL_SCOPES));
    expect(userInfo.granular_scopes?.find((g) => g.scope === 'instagram_basic')?.target_ids).toEqual([
      c.igId,
    ]);
    const ig = await h.client.accounts.instagramUser(c.pageToken, c.igId);
    expect(ig).toMatchObject({ id: c.igId, username: 'acmebakery' });
  });

  // Guarantee: an authorization code is single-use (Meta's 100/36009), surfaced as an invalid_request network_error.
  it('refuses a reused code', async () => {
    const created = await h.control<{ user: { id: string } }>('POST', '/__sandbox/users', { pages: [{}] });
    const form = new URLSearchParams({
      client_id: h.client.config.appId,
      redirect_uri: 'http://127.0.0.1:1/cb',
      state: 'x',
      scope: 'pages_show_list',
      user_id: created.body.user.id,
      decision: 'approve',
    });
    const res = await fetch(`${h.sandbox.url}/__sandbox/consent`, {
      method: 'POST',
      body: form,
      redirect: 'manual',
    });
    const code = new URL(res.headers.get('location') ?? '').searchParams.get('code') ?? '';
    await h.client.oauth.exchangeCode({ code, redirectUri: 'http://127.0.0.1:1/cb' });
    const error = await failure<GraphApiError>(() =>
      h.client.oauth.exchangeCode({ code, redirectUri: 'http://127.0.0.1:1/cb' }),
    );
    expect(error).toBeInstanceOf(GraphApiError);
    expect(error.code).toBe('network_error');
    expect(error.details).toMatchObject({ code: 100, subcode: 36009, type: 'OAuthException' });
    expect(error.kind).toBe('invalid_request');
  });

  // Guarantee: Deny redirects with Meta's error parameters and the state, and no code.
  it('redirects a denial with error=access_denied', async () => {
    const form = new URLSearchParams({
      client_id: h.client.config.appId,
      redirect_uri: 'http://127.0.0.1:1/cb',
      state: 'st',
      scope: '',
      decision: 'deny',
    });
    const res = await fetch(`${h.sandbox.url}/__sandbox/consent`, {
      method: 'POST',
      body: form,
      redirect: 'manual',
    });
    const location = new URL(res.headers.get('location') ?? '');
    expect(res.status).toBe(302);
    expect(Object.fromEntries(location.searchParams)).toMatchObject({
      error: 'access_denied',
      error_reason: 'user_denied',
      state: 'st',
    });
    expect(location.searchParams.has('code')).toBe(false);
  });

  // Guarantee: a short-lived user token expires with the clock and the caller can tell "expired" (190/463) apart.
  it('classifies an expired short-lived token as expired', async () => {
    const c = await connectUser(h);
    const form = new URLSearchParams({
      client_id: h.client.config.appId,
      redirect_uri: 'http://127.0.0.1:1/cb',
      state: 'x',
      scope: 'pages_show_list',
      user_id: c.userId,
      decision: 'approve',
    });
    const res = await fetch(`${h.sandbox.url}/__sandbox/consent`, {
      method: 'POST',
      body: form,
      redirect: 'manual',
    });
    const code = new URL(res.headers.get('location') ?? '').searchParams.get('code') ?? '';
    const short = await h.client.oauth.exchangeCode({ code, redirectUri: 'http://127.0.0.1:1/cb' });
    expect(short.expires_in).toBe(3600);
    await h.control('POST', '/__sandbox/clock', { advance_seconds: 3601 });
    const error = await failure<GraphApiError>(() => h.client.accounts.me(short.access_token));
    expect(error.details).toMatchObject({ code: 190, subcode: 463 });
    expect(error.tokenProblem).toBe('expired');
    // The page token from the long-lived token is unaffected by time.
    expect((await h.client.accounts.page(c.pageToken, c.pageId)).id).toBe(c.pageId);
  });

  // Guarantee: expire-tokens makes every token of the user (page tokens too) fail as expired.
  it('expire-tokens expires the page token too', async () => {
    const c = await connectUser(h);
    await h.control('POST', `/__sandbox/users/${c.userId}/expire-tokens`);
    const error = await failure<GraphApiError>(() => h.client.instagram.publishingLimit(c.pageToken, c.igId));
    expect(error.tokenProblem).toBe('expired');
  });

  // Guarantee: removing the app revokes tokens (190/458 → revoked) and POSTs a signed_request our verifier accepts; a tampered one is refused.
  it('deauthorizes with a valid signed_request and revoked tokens', async () => {
    const c = await connectUser(h);
    const before = h.internet.received.length;
    await h.control('POST', `/__sandbox/users/${c.userId}/deauthorize`);
    const callback = h.internet.received.slice(before).find((r) => r.url === '/deauthorize');
    expect(callback?.headers['content-type']).toBe('application/x-www-form-urlencoded');
    const signed = new URLSearchParams(callback?.raw.toString()).get('signed_request') ?? '';
    expect(parseSignedRequest(signed, APP_SECRET)).toMatchObject({
      algorithm: 'HMAC-SHA256',
      user_id: c.userId,
    });
    expect(parseSignedRequest(signed, 'another-secret-0123456789abcdef')).toBeNull();
    const [sig, payload] = signed.split('.');
    const forged = Buffer.from(JSON.stringify({ algorithm: 'HMAC-SHA256', user_id: '1' })).toString(
      'base64url',
    );
    expect(parseSignedRequest(`${sig}.${forged}`, APP_SECRET)).toBeNull();
    expect(payload).toBeTruthy();
    const error = await failure<GraphApiError>(() => h.client.accounts.pages(c.userToken));
    expect(error.details).toMatchObject({ code: 190, subcode: 458 });
    expect(error.tokenProblem).toBe('revoked');
    const pageError = await failure<GraphApiError>(() =>
      h.client.pages.postToFeed(c.pageToken, c.pageId, { message: 'hi' }),
    );
    expect(pageError.tokenProblem).toBe('revoked');
    const debug = await h.client.oauth.debugToken(c.userToken);
    expect(debug).toMatchObject({ is_valid: false, error: { code: 190, subcode: 458 } });
  });

  // Guarantee: a garbage token is "invalid" (190 without subcode), distinct from expired and revoked.
  it('classifies an unparseable token as invalid', async () => {
    const error = await failure<GraphApiError>(() => h.client.accounts.me('EAAnotatoken'));
    expect(error.details).toMatchObject({ code: 190, subcode: null });
    expect(error.tokenProblem).toBe('invalid');
  });
});
