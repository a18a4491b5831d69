import { afterAll, beforeAll, beforeEach, describe, expect, it } from 'vitest';
import { type Connected, type Harness, startHarness } from './harness.ts';

let h: Harness;
let c: Connected;
beforeAll(async () => {
  h = await startHarness({ sendEchoes: false });
  c = await h.connect();
});
afterAll(() => h.close());
beforeEach(async () => {
  await h.control('POST', '/__sandbox/config', { usage: null, throttle: null, outage: null });
  await h.control('DELETE', '/__sandbox/faults');
});

type Json = Record<string, unknown>;

/** A Graph call that keeps the response headers (the harness's `graph` returns only the body). */
async function call(method: string, path: string, token?: string, json?: unknown) {
  const url = new URL(`/v25.0${path}`, h.sandbox.url);
  if (token) url.searchParams.set('access_token', token);
  const res = await fetch(url, {
    method,
    headers: json === undefined ? {} : { 'content-type': 'application/json' },
    body: json === undefined ? undefined : JSON.stringify(json),
  });
  const header = (name: string) => res.headers.get(name);
  const parsed = (name: string) => JSON.parse(header(name) ?? 'null') as unknown;
  return { status: res.status, header, parsed, body: (await res.json()) as Json };
}

const setConfig = (body: unknown) => h.control('POST', '/__sandbox/config', body);
const DEFAULT_APP_USAGE = { call_count: 1, total_cputime: 1, total_time: 1 };
const OUTAGE_ERROR = {
  message: 'An unexpected error has occurred. Please retry your request later.',
  type: 'OAuthException',
  code: 2,
  is_transient: true,
  fbtrace_id: expect.any(String),
};
const entry = (type: string, count: number, regain = 0) => ({
  type,
  call_count: count,
  total_cputime: 2,
  total_time: 3,
  estimated_time_to_regain_access: regain,
});

describe('the run-time configuration', () => {
  // Guarantee: GET reads back exactly what POST set (defaults filled in); POST merges top-level keys and usage.app/usage.business, and null clears a key.
  it('round-trips, merges and clears keys', async () => {
    expect((await h.control('GET', '/__sandbox/config')).body).toEqual({ config: {} });
    const app = { call_count: 40, total_cputime: 5, total_time: 7 };
    const set = await setConfig({
      usage: { app },
      throttle: { business_id: c.igId, regain_minutes: 3 },
      outage: {},
    });
    const first = {
      usage: { app },
      throttle: { business_id: c.igId, code: 80002, regain_minutes: 3 },
      outage: { status: 503 },
    };
    expect(set).toEqual({ status: 200, body: { config: first } });
    const business = { [c.pageId]: [entry('pages', 12)] };
    const merged = await setConfig({ usage: { business } });
    expect(merged.body).toEqual({ config: { ...first, usage: { app, business } } });
    const cleared = await setConfig({ throttle: null, outage: null, usage: { app: null } });
    expect(cleared.body).toEqual({ config: { usage: { business } } });
    expect((await h.control('GET', '/__sandbox/config')).body).toEqual({ config: { usage: { business } } });
    await setConfig({ usage: { business: null } });
    expect((await h.control('GET', '/__sandbox/config')).body).toEqual({ config: {} });
  });

  // Guarantee: a bad body is refused with the control API's 400 naming the field, and the config is left as it was.
  it('refuses a bad body and changes nothing', async () => {
    const refusals: [unknown, string][] = [
      [{ outage: { status: 404 } }, 'outage.status'],
      [{ throttle: { business_id: 'acme', regain_minutes: 1 } }, 'throttle.business_id'],
      [{ throttle: { business_id: c.igId, code: 4, regain_minutes: 1 } }, 'throttle.code'],
      [{ throttle: { business_id: c.igId } }, 'throttle.regain_minutes'],
      [{ usage: { app: { call_count: 'high' } } }, 'usage.app.call_count'],
      [{ video_processing: 5 }, 'video_processing'],
      [[1], 'body'],
    ];
    for (const [body, field] of refusals) {
      const res = await setConfig(body);
      expect(res.status).toBe(400);
      expect(res.body).toEqual({ error: { message: expect.stringContaining(field) } });
    }
    expect((await h.control('GET', '/__sandbox/config')).body).toEqual({ config: {} });
  });

  // Guarantee: video_processing_ms round-trips beside the other keys, null clears it, and only whole milliseconds from 0 to 10 minutes are taken.
  it('sets, reads back and clears the video processing time', async () => {
    expect((await setConfig({ video_processing_ms: 250 })).body).toEqual({
      config: { video_processing_ms: 250 },
    });
    await setConfig({ outage: {} });
    const both = { config: { video_processing_ms: 250, outage: { status: 503 } } };
    expect((await h.control('GET', '/__sandbox/config')).body).toEqual(both);
    for (const bad of [-1, 1.5, 600_001, '250']) {
      const res = await setConfig({ video_processing_ms: bad });
      expect(res.status).toBe(400);
      expect(res.body).toEqual({ error: { message: expect.stringContaining('video_processing_ms') } });
    }
    expect((await setConfig({ video_processing_ms: 600_000 })).status).toBe(200);
    await setConfig({ video_processing_ms: null, outage: null });
    expect((await h.control('GET', '/__sandbox/config')).body).toEqual({ config: {} });
  });

  // Guarantee: image_processing_ms takes the same bounds as the video time, round-trips and clears.
  it('sets, reads back and clears the image processing time', async () => {
    expect((await setConfig({ image_processing_ms: 1500 })).body).toEqual({
      config: { image_processing_ms: 1500 },
    });
    const res = await setConfig({ image_processing_ms: 600_001 });
    expect(res.status).toBe(400);
    expect(res.body).toEqual({ error: { message: expect.stringContaining('image_processing_ms') } });
    await setConfig({ image_processing_ms: null });
    expect((await h.control('GET', '/__sandbox/config')).body).toEqual({ config: {} });
  });

  // Guarantee: while usage is set, success and error answers carry x-app-usage = usage.app and x-business-use-case-usage with only the ids their path names ({page}_{post} ids count for the Page); unset, the ordinary header and no BUC.
  it('reports the configured usage in the headers of every Graph answer', async () => {
    const before = await call('GET', `/${c.igId}?fields=id`, c.pageToken);
    expect(before.parsed('x-app-usage')).toEqual(DEFAULT_APP_USAGE);
    expect(before.header('x-business-use-case-usage')).toBeNull();

    const app = { call_count: 75, total_cputime: 20, total_time: 30 };
    const business = {
      [c.igId]: [entry('instagram', 60, 0)],
      [c.pageId]: [entry('pages', 30, 0)],
      '1999999999': [entry('pages', 99, 9)],
    };
    await setConfig({ usage: { app, business } });
    const ig = await call('GET', `/${c.igId}?fields=id`, c.pageToken);
    expect(ig.status).toBe(200);
    expect(ig.parsed('x-app-usage')).toEqual(app);
    expect(ig.parsed('x-business-use-case-usage')).toEqual({ [c.igId]: business[c.igId] });

    const failed = await call('GET', `/${c.igId}/no_such_edge`, c.pageToken);
    expect(failed.status).toBe(400);
    expect(failed.body.error).toMatchObject({ code: 2500 });
    expect(failed.parsed('x-app-usage')).toEqual(app);
    expect(failed.parsed('x-business-use-case-usage')).toEqual({ [c.igId]: business[c.igId] });

    const post = await call('POST', `/${c.pageId}/feed`, c.pageToken, { message: 'usage headers' });
    expect(post.parsed('x-business-use-case-usage')).toEqual({ [c.pageId]: business[c.pageId] });
    const read = await call('GET', `/${String(post.body.id)}`, c.pageToken);
    expect(read.status).toBe(200);
    expect(read.parsed('x-business-use-case-usage')).toEqual({ [c.pageId]: business[c.pageId] });

    const me = await call('GET', '/me?fields=id', c.pageToken);
    expect(me.parsed('x-app-usage')).toEqual(app);
    expect(me.header('x-business-use-case-usage')).toBeNull();
    const control = await fetch(`${h.sandbox.url}/__sandbox/config`);
    expect(control.headers.get('x-app-usage')).toBeNull();

    await setConfig({ usage: null });
    const after = await call('GET', `/${c.igId}?fields=id`, c.pageToken);
    expect(after.parsed('x-app-usage')).toEqual(DEFAULT_APP_USAGE);
    expect(after.header('x-business-use-case-usage')).toBeNull();
  });

  // Guarantee: a fault's explicit headers win over the configured usage for the answer it makes; headers it does not set still come from the config.
  it('lets a fault set its own usage header', async () => {
    const app = { call_count: 10, total_cputime: 10, total_time: 10 };
    const business = { [c.igId]: [entry('instagram', 10)] };
    await setConfig({ usage: { app, business } });
    const faultUsage = JSON.stringify({ call_count: 99, total_cputime: 1, total_time: 1 });
    await h.control('POST', '/__sandbox/faults', {
      path: `/${c.igId}`,
      error: { code: 1, message: 'An unknown error occurred' },
      headers: { 'x-app-usage': faultUsage },
    });
    const faulted = await call('GET', `/${c.igId}?fields=id`, c.pageToken);
    expect(faulted.status).toBe(400);
    expect(faulted.header('x-app-usage')).toBe(faultUsage);
    expect(faulted.parsed('x-business-use-case-usage')).toEqual(business);
    expect((await call('GET', `/${c.igId}?fields=id`, c.pageToken)).parsed('x-app-usage')).toEqual(app);
  });

  // Guarantee: a throttled Instagram account answers Meta's 80002 (HTTP 400, transient) with a BUC header at call_count 100 and the regain minutes, only for calls naming it, until cleared.
  it('throttles one business object until cleared', async () => {
    await setConfig({ throttle: { business_id: c.igId, regain_minutes: 7 } });
    const buc = {
      [c.igId]: [
        {
          type: 'instagram',
          call_count: 100,
          total_cputime: 0,
          total_time: 0,
          estimated_time_to_regain_access: 7,
        },
      ],
    };
    for (const method of ['GET', 'POST']) {
      const res = await call(method, `/${c.igId}/media`, c.pageToken, method === 'POST' ? {} : undefined);
      expect(res.status).toBe(400);
      expect(res.body).toEqual({
        error: {
          message:
            '(#80002) There have been too many calls to this Instagram account. Wait a bit and try again.',
          type: 'OAuthException',
          code: 80002,
          is_transient: true,
          fbtrace_id: res.header('x-fb-trace-id'),
        },
      });
      expect(res.parsed('x-business-use-case-usage')).toEqual(buc);
      expect(res.parsed('x-app-usage')).toEqual(DEFAULT_APP_USAGE);
    }
    expect((await call('GET', `/${c.pageId}?fields=id`, c.pageToken)).status).toBe(200);

    await setConfig({ throttle: null });
    const back = await call('GET', `/${c.igId}/media`, c.pageToken);
    expect(back.status).toBe(200);
    expect(back.header('x-business-use-case-usage')).toBeNull();
  });

  // Guarantee: a throttle given code 80001 answers the Pages form of the error and a `pages` BUC entry.
  it('throttles a Page with 80001', async () => {
    await setConfig({ throttle: { business_id: c.pageId, code: 80001, regain_minutes: 0 } });
    const res = await call('GET', `/${c.pageId}/feed`, c.pageToken);
    expect(res.status).toBe(400);
    expect(res.body.error).toMatchObject({
      message: '(#80001) There have been too many calls to this Page account. Wait a bit and try again.',
      code: 80001,
      is_transient: true,
    });
    expect(res.parsed('x-business-use-case-usage')).toEqual({
      [c.pageId]: [
        {
          type: 'pages',
          call_count: 100,
          total_cputime: 0,
          total_time: 0,
          estimated_time_to_regain_access: 0,
        },
      ],
    });
  });

  // Guarantee: during an outage every Graph path (token or not, OAuth exchange included) answers the status with Meta's transient code 2; faults wait behind it; clearing restores service.
  it('answers every Graph call with the outage until cleared', async () => {
    await setConfig({ outage: {} });
    await h.control('POST', '/__sandbox/faults', {
      path: `/${c.pageId}`,
      error: { code: 1, message: 'later' },
    });
    for (const [path, token] of [
      [`/${c.pageId}?fields=id`, c.pageToken],
      ['/me', undefined],
      ['/oauth/access_token?grant_type=fb_exchange_token', undefined],
    ] as const) {
      const res = await call('GET', path, token);
      expect(res.status).toBe(503);
      expect(res.body).toEqual({ error: { ...OUTAGE_ERROR, fbtrace_id: res.header('x-fb-trace-id') } });
      expect(res.header('facebook-api-version')).toBe('v25.0');
      expect(res.parsed('x-app-usage')).toEqual(DEFAULT_APP_USAGE);
    }
    await setConfig({ outage: { status: 500 } });
    const other = await call('POST', `/${c.pageId}/feed`, c.pageToken, { message: 'down' });
    expect(other.status).toBe(500);
    expect(other.body).toEqual({ error: OUTAGE_ERROR });

    await setConfig({ outage: null });
    const fault = await call('GET', `/${c.pageId}?fields=id`, c.pageToken);
    expect(fault.body.error).toMatchObject({ code: 1, message: 'later' });
    expect((await call('GET', `/${c.pageId}?fields=id`, c.pageToken)).status).toBe(200);
  });

  // Guarantee: an outage leaves the control API and the OAuth dialog page working.
  it('keeps control paths and the login dialog up during an outage', async () => {
    await setConfig({ outage: { status: 503 } });
    expect((await h.control('GET', '/__sandbox/config')).body).toEqual({
      config: { outage: { status: 503 } },
    });
    expect((await h.control('GET', '/__sandbox/published')).status).toBe(200);
    const dm = await h.control('POST', `/__sandbox/instagram/${c.igId}/messages`, {
      from: { username: 'outage.fan' },
      text: 'still there?',
    });
    expect(dm.status).toBe(201);
    const dialog = new URL('/v25.0/dialog/oauth', h.sandbox.url);
    dialog.searchParams.set('client_id', h.sandbox.world.config.appId);
    dialog.searchParams.set('redirect_uri', `${h.internet.url}/callback`);
    const page = await fetch(dialog);
    expect(page.status).toBe(200);
    expect(page.headers.get('content-type')).toContain('text/html');
  });

  // Guarantee: POST /__sandbox/reset ends every configured condition with the rest of the state.
  it('is emptied by a reset', async () => {
    await setConfig({ outage: {}, usage: { app: DEFAULT_APP_USAGE } });
    await h.control('POST', '/__sandbox/reset');
    expect((await h.control('GET', '/__sandbox/config')).body).toEqual({ config: {} });
  });
});
