import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { faultPattern } from '../src/faults.ts';
import { type RunningSandbox, sandboxConfig, startSandbox, stripVersion } from '../src/index.ts';

let sb: RunningSandbox;
beforeAll(async () => {
  sb = await startSandbox(
    sandboxConfig({ port: 0, logLevel: 'silent', webhookUrl: '', containerProcessingMs: 0 }),
  );
});
afterAll(() => sb.close());

const call = async (method: string, path: string, body?: unknown) => {
  const res = await fetch(`${sb.url}${path}`, {
    method,
    headers: body === undefined ? {} : { 'content-type': 'application/json' },
    body: body === undefined ? undefined : JSON.stringify(body),
  });
  return { status: res.status, headers: res.headers, body: (await res.json()) as Record<string, unknown> };
};

describe('control API', () => {
  // Guarantee: POST /__sandbox/users answers 201 with exactly the documented shape, digit-string ids, null for pages without Instagram.
  it('creates users with pages and instagram accounts', async () => {
    const res = await call('POST', '/__sandbox/users', {
      name: 'Ann',
      pages: [{ name: 'P1', instagram: { username: 'p1' } }, {}],
    });
    expect(res.status).toBe(201);
    expect(res.body).toEqual({
      user: { id: expect.stringMatching(/^\d{17}$/), name: 'Ann' },
      pages: [
        {
          id: expect.stringMatching(/^\d+$/),
          name: 'P1',
          instagram: { id: expect.stringMatching(/^17841\d+$/), username: 'p1' },
        },
        { id: expect.stringMatching(/^\d+$/), name: expect.any(String), instagram: null },
      ],
    });
  });

  // Guarantee: a bad control body is a 400 naming the field, not a crash.
  it('validates control bodies', async () => {
    const res = await call('POST', '/__sandbox/faults', { path: 'no-slash' });
    expect(res.status).toBe(400);
    expect(String((res.body.error as { message: string }).message)).toContain('path');
  });

  // Guarantee: a fault answers the next `times` matching calls with Meta's error object (plus fbtrace_id) and then stops; DELETE clears.
  it('injects faults by method and path pattern', async () => {
    await call('POST', '/__sandbox/faults', {
      method: 'GET',
      path: '/*/accounts',
      times: 2,
      status: 500,
      error: { code: 2, message: 'boom', is_transient: true },
    });
    for (let i = 0; i < 2; i++) {
      const res = await call('GET', '/v25.0/me/accounts');
      expect(res.status).toBe(500);
      expect(res.body.error).toMatchObject({
        code: 2,
        message: 'boom',
        type: 'OAuthException',
        fbtrace_id: expect.any(String),
      });
    }
    expect((await call('GET', '/v25.0/me/accounts')).body.error).toMatchObject({ code: 104 });
    await call('POST', '/__sandbox/faults', { path: '/me', error: { code: 1 } });
    expect((await call('DELETE', '/__sandbox/faults')).body).toEqual({ cleared: 1 });
    expect((await call('GET', '/me')).body.error).toMatchObject({ code: 104 });
  });

  // Guarantee: `*` is exactly one path segment, and paths are matched without the version prefix.
  it('matches fault patterns segment by segment', () => {
    expect(faultPattern('/*/media_publish').test('/1784/media_publish')).toBe(true);
    expect(faultPattern('/*/media_publish').test('/a/b/media_publish')).toBe(false);
    expect(faultPattern('/*/feed').test('/123_456/feed')).toBe(true);
    expect(stripVersion('/v25.0/me?x=1')).toBe('/me?x=1');
    expect(stripVersion('/v19/me')).toBe('/me');
    expect(stripVersion('/me')).toBe('/me');
  });

  // Guarantee: Graph conventions — 190 carries WWW-Authenticate, responses carry facebook-api-version and usage headers, unknown ids give 100/33.
  it('answers with Graph headers and error objects', async () => {
    const bad = await call('GET', '/v21.0/me?access_token=nope');
    expect(bad.status).toBe(400);
    expect(bad.headers.get('www-authenticate')).toMatch(/^OAuth "Facebook Platform" "invalid_token"/);
    expect(bad.headers.get('facebook-api-version')).toBe('v25.0');
    expect(JSON.parse(bad.headers.get('x-app-usage') ?? '{}')).toHaveProperty('call_count');
    const app = `${sb.world.config.appId}|${sb.world.config.appSecret}`;
    const unknown = await call('GET', `/999/?access_token=${encodeURIComponent(app)}`);
    expect(unknown.body.error).toMatchObject({ code: 100, error_subcode: 33, type: 'GraphMethodException' });
  });

  // Guarantee: reset empties users, content and logs.
  it('resets to an empty state', async () => {
    await call('POST', '/__sandbox/users', { pages: [{}] });
    expect((await call('POST', '/__sandbox/reset')).status).toBe(200);
    expect((await call('GET', '/__sandbox/users')).body.data).toEqual([]);
    expect((await call('GET', '/__sandbox/published')).body.data).toEqual([]);
    expect((await call('GET', '/__sandbox/sent')).body.data).toEqual([]);
  });
});
