import { createHash } from 'node:crypto';
import { AuthCache } from '@svc/auth-cache';
import { api } from '@svc/testing';
import { type Stack, startStack } from '@svc/testing/stack';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';

let stack: Stack;
let partner: ReturnType<typeof api>;
let workspace: string;

beforeAll(async () => {
  stack = await startStack();
  partner = api(stack.gateway.url, (await stack.createPartner()).key);
  workspace = (await partner('POST', '/v1/workspaces', { name: 'Embed Bakery' })).body.id;
});
afterAll(() => stack.stop());

const ORIGINS = ['https://app.partner.example'];
const mint = (body: Record<string, unknown>) => partner('POST', '/v1/embed-sessions', body);

describe('embed sessions', () => {
  // Guarantee: a session is minted with the defaults of issue 15, its token shown once and kept
  // only as its SHA-256 (the row holds the hash, never the token).
  it('mints a session with defaults and keeps only the hash of its token', async () => {
    const before = Date.now();
    const res = await mint({ workspace, allowed_origins: ORIGINS });
    expect(res.status).toBe(201);
    expect(res.body).toMatchObject({
      workspace,
      surfaces: ['connect', 'inbox', 'publish'],
      allowed_origins: ORIGINS,
    });
    expect(res.body.id).toMatch(/^emb_[0-9A-Za-z]{25}$/);
    expect(res.body.token).toMatch(/^sve_[0-9A-Za-z]{40}$/);
    const expiresMs = Date.parse(res.body.expires_at) - before;
    expect(expiresMs).toBeGreaterThan(3_590_000);
    expect(expiresMs).toBeLessThan(3_610_000);
    const row = await stack.identity.prisma.embedSession.findUniqueOrThrow({ where: { id: res.body.id } });
    expect(row.hash).toBe(createHash('sha256').update(res.body.token).digest('hex'));
    expect(JSON.stringify(row)).not.toContain(res.body.token);

    const list = await partner('GET', `/v1/embed-sessions?workspace=${workspace}`);
    expect(list.status).toBe(200);
    expect(list.body.data.map((s: { id: string }) => s.id)).toContain(res.body.id);
    expect(JSON.stringify(list.body)).not.toContain(res.body.token);
    expect(list.body.data[0]).not.toHaveProperty('token');
    expect(list.body).toMatchObject({ page: 1, limit: 50 });
  });

  // Guarantee: surfaces, expiry and (serialized) origins are kept as asked.
  it('keeps chosen surfaces, expiry and several origins', async () => {
    const res = await mint({
      workspace,
      surfaces: ['inbox'],
      allowed_origins: ['https://app.partner.example:8443', 'https://b.example'],
      expires_in: 60,
    });
    expect(res.status).toBe(201);
    expect(res.body.surfaces).toEqual(['inbox']);
    expect(res.body.allowed_origins).toEqual(['https://app.partner.example:8443', 'https://b.example']);
    expect(Date.parse(res.body.expires_at) - Date.parse(res.body.created)).toBe(60_000);
  });

  // Guarantee: every refusal is validation_error naming the exact field, or not_found for a workspace
  // outside the partner's scope.
  it.each([
    [{ allowed_origins: ORIGINS }, 'workspace'],
    [{ workspace: 'nope', allowed_origins: ORIGINS }, 'workspace'],
    [{ workspace: ':ws' }, 'allowed_origins'],
    [{ workspace: ':ws', allowed_origins: [] }, 'allowed_origins'],
    [{ workspace: ':ws', allowed_origins: ['http://app.partner.example'] }, 'allowed_origins.0'],
    [{ workspace: ':ws', allowed_origins: [ORIGINS[0], 'https://a.example/path'] }, 'allowed_origins.1'],
    [{ workspace: ':ws', allowed_origins: ['https://a.example/'] }, 'allowed_origins.0'],
    [{ workspace: ':ws', allowed_origins: ['https://*.example.com'] }, 'allowed_origins.0'],
    [{ workspace: ':ws', allowed_origins: ['https://u:p@a.example'] }, 'allowed_origins.0'],
    [{ workspace: ':ws', allowed_origins: ['ftp://a.example'] }, 'allowed_origins.0'],
    [{ workspace: ':ws', allowed_origins: ['not a url'] }, 'allowed_origins.0'],
    [{ workspace: ':ws', allowed_origins: ORIGINS, surfaces: ['billing'] }, 'surfaces.0'],
    [{ workspace: ':ws', allowed_origins: ORIGINS, surfaces: [] }, 'surfaces'],
    [{ workspace: ':ws', allowed_origins: ORIGINS, expires_in: 59 }, 'expires_in'],
    [{ workspace: ':ws', allowed_origins: ORIGINS, expires_in: 86_401 }, 'expires_in'],
    [{ workspace: ':ws', allowed_origins: ORIGINS, expires_in: 1.5 }, 'expires_in'],
    [{ workspace: ':ws', allowed_origins: ORIGINS, token: 'sve_mine' }, 'token'],
  ])('refuses %j naming %s', async (body, field) => {
    const res = await mint(JSON.parse(JSON.stringify(body).replace('":ws"', `"${workspace}"`)));
    expect(res.status).toBe(400);
    expect(res.body.error).toMatchObject({ code: 'validation_error', field });
  });

  // Guarantee: http origins are accepted for loopback in development mode (the stack's mode).
  it('accepts http loopback origins in development', async () => {
    const res = await mint({
      workspace,
      allowed_origins: ['http://127.0.0.1:5173', 'http://localhost:3000'],
    });
    expect(res.status).toBe(201);
    expect(res.body.allowed_origins).toEqual(['http://127.0.0.1:5173', 'http://localhost:3000']);
  });

  // Guarantee: a workspace of another partner (or none) is not found; another partner's session cannot be ended.
  it('scopes sessions to the partner', async () => {
    const stranger = api(stack.gateway.url, (await stack.createPartner()).key);
    const res = await stranger('POST', '/v1/embed-sessions', { workspace, allowed_origins: ORIGINS });
    expect(res.status).toBe(404);
    expect(res.body.error.code).toBe('not_found');
    const mine = (await mint({ workspace, allowed_origins: ORIGINS })).body;
    expect((await stranger('DELETE', `/v1/embed-sessions/${mine.id}`)).status).toBe(404);
    expect((await stranger('GET', '/v1/embed-sessions')).body.data).toEqual([]);
    expect((await partner('DELETE', '/v1/embed-sessions/emb_nothing')).status).toBe(404);
  });

  // Guarantee: only a partner key mints, lists and ends sessions (spec 5).
  it('refuses workspace keys and embed sessions', async () => {
    const key = (await partner('POST', `/v1/workspaces/${workspace}/keys`, { label: 'w' })).body.key;
    const session = (await mint({ workspace, allowed_origins: ORIGINS })).body;
    for (const token of [key, session.token]) {
      const caller = api(stack.gateway.url, token);
      for (const [method, path, body] of [
        ['POST', '/v1/embed-sessions', { workspace, allowed_origins: ORIGINS }],
        ['GET', '/v1/embed-sessions', undefined],
        ['DELETE', `/v1/embed-sessions/${session.id}`, undefined],
      ] as const) {
        const res = await caller(method, path, body);
        expect(res.status, `${method} ${path}`).toBe(403);
        expect(res.body.error.code).toBe('forbidden');
      }
    }
  });
});

describe('the sve_ principal', () => {
  // Guarantee: an ended session is refused at once, on another gateway replica as well, and no
  // longer listed.
  it('ends a session on every gateway at once', async () => {
    const other = await stack.startGateway();
    const session = (await mint({ workspace, allowed_origins: ORIGINS })).body;
    const here = api(stack.gateway.url, session.token);
    const there = api(other.url, session.token);
    // Both replicas have the session cached before it ends.
    expect((await here('GET', '/v1/workspaces')).status).toBe(403);
    expect((await there('GET', '/v1/workspaces')).status).toBe(403);
    expect((await partner('DELETE', `/v1/embed-sessions/${session.id}`)).status).toBe(204);
    for (const call of [there, here]) {
      const res = await call('GET', '/v1/workspaces');
      expect(res.status).toBe(401);
      expect(res.body.error.code).toBe('unauthorized');
    }
    const list = await partner('GET', `/v1/embed-sessions?workspace=${workspace}`);
    expect(list.body.data.map((s: { id: string }) => s.id)).not.toContain(session.id);
    expect((await partner('DELETE', `/v1/embed-sessions/${session.id}`)).status).toBe(404);
  });

  // Guarantee: a session is refused from its expiry on, even while its principal is still cached
  // (the gateway's script compares the expiry with Redis's clock).
  it('refuses a session once it expires', async () => {
    const session = (await mint({ workspace, allowed_origins: ORIGINS, expires_in: 60 })).body;
    const hash = createHash('sha256').update(session.token).digest('hex');
    await stack.identity.prisma.embedSession.update({
      where: { id: session.id },
      data: { expiresAt: new Date(Date.now() + 1_500) },
    });
    const cache = new AuthCache(stack.gateway.redis, `${stack.prefix}:`);
    await cache.forget([hash]);
    const call = api(stack.gateway.url, session.token);
    expect((await call('GET', '/v1/workspaces')).status).toBe(403); // valid, not for this route
    await new Promise((resolve) => setTimeout(resolve, 1_600));
    expect(await stack.gateway.redis.get(cache.authKey(hash))).toContain(session.id);
    const res = await call('GET', '/v1/workspaces');
    expect(res.status).toBe(401);
    expect(res.body.error.code).toBe('unauthorized');
  });

  // Guarantee: deleting the workspace ends its sessions.
  it('ends the sessions of a deleted workspace', async () => {
    const doomed = (await partner('POST', '/v1/workspaces', { name: 'Doomed' })).body.id;
    const session = (await mint({ workspace: doomed, allowed_origins: ORIGINS })).body;
    const call = api(stack.gateway.url, session.token);
    expect((await call('GET', '/v1/workspaces')).status).toBe(403);
    expect((await partner('DELETE', `/v1/workspaces/${doomed}`)).status).toBe(204);
    expect((await call('GET', '/v1/workspaces')).status).toBe(401);
    const row = await stack.identity.prisma.embedSession.findUniqueOrThrow({ where: { id: session.id } });
    expect(row.endedAt).not.toBeNull();
  });
});
