import { api, eventually } from '@svc/testing';
import { type Stack, startStack } from '@svc/testing/stack';
import pg from 'pg';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';

let stack: Stack;
let partner: ReturnType<typeof api>;
let workspaceId: string;

beforeAll(async () => {
  stack = await startStack({ LAST_USED_FLUSH_MS: '200' });
  const { key } = await stack.createPartner();
  partner = api(stack.gateway.url, key);
  workspaceId = (await partner('POST', '/v1/workspaces', { name: 'Keys' })).body.id;
});
afterAll(() => stack.stop());

describe('API keys', () => {
  // Guarantee: the plain key is shown once, hashed at rest, never listed.
  it('shows the plain key only at creation and stores only its hash', async () => {
    const created = await partner('POST', `/v1/workspaces/${workspaceId}/keys`, { label: 'zapier' });
    expect(created.status).toBe(201);
    expect(created.body).toMatchObject({
      id: expect.stringMatching(/^key_/),
      label: 'zapier',
      prefix: created.body.key.slice(0, 13),
    });
    expect(created.body.key).toMatch(/^svc_live_[0-9A-Za-z]{32,}$/);
    const listed = await partner('GET', `/v1/workspaces/${workspaceId}/keys`);
    expect(listed.body).toMatchObject({ page: 1, limit: 50, total: 1 });
    expect(listed.body.data[0]).toEqual({
      id: created.body.id,
      prefix: created.body.prefix,
      label: 'zapier',
      last_used_at: null,
      created: expect.any(String),
    });
    expect(JSON.stringify(listed.body)).not.toContain(created.body.key);
    const db = new pg.Client({ connectionString: stack.databaseUrl });
    await db.connect();
    const { rows } = await db.query('SELECT * FROM identity.api_keys WHERE id = $1', [created.body.id]);
    await db.end();
    expect(JSON.stringify(rows)).not.toContain(created.body.key);
    expect(rows[0].hash).toMatch(/^[0-9a-f]{64}$/);
  });

  // Guarantee: last_used_at moves without a database write per request (flushed in batches).
  it('records last use in batches', async () => {
    const created = await partner('POST', `/v1/workspaces/${workspaceId}/keys`, { label: 'used' });
    const workspaceKey = api(stack.gateway.url, created.body.key);
    for (let i = 0; i < 5; i++)
      expect((await workspaceKey('GET', `/v1/workspaces/${workspaceId}`)).status).toBe(200);
    const used = await eventually(async () => {
      const listed = await partner('GET', `/v1/workspaces/${workspaceId}/keys?limit=200`);
      const row = listed.body.data.find((k: { id: string }) => k.id === created.body.id);
      return row?.last_used_at ?? undefined;
    });
    expect(Date.now() - Date.parse(used)).toBeLessThan(10_000);
  });

  // Guarantee: revocation takes effect at once on every gateway replica, even ones that cached the key.
  it('stops a revoked key at once on every gateway', async () => {
    const second = await stack.startGateway();
    const created = await partner('POST', `/v1/workspaces/${workspaceId}/keys`, { label: 'rotate me' });
    const viaFirst = api(stack.gateway.url, created.body.key);
    const viaSecond = api(second.url, created.body.key);
    expect((await viaFirst('GET', `/v1/workspaces/${workspaceId}`)).status).toBe(200);
    expect((await viaSecond('GET', `/v1/workspaces/${workspaceId}`)).status).toBe(200);
    expect((await partner('DELETE', `/v1/workspaces/${workspaceId}/keys/${created.body.id}`)).status).toBe(
      204,
    );
    for (const client of [viaFirst, viaSecond]) {
      const res = await client('GET', `/v1/workspaces/${workspaceId}`);
      expect(res.status).toBe(401);
      expect(res.body.error.code).toBe('unauthorized');
    }
    expect((await partner('DELETE', `/v1/workspaces/${workspaceId}/keys/${created.body.id}`)).status).toBe(
      404,
    );
  });

  // Guarantee: a revoked key stays refused after the shared cache is lost (Postgres is the truth).
  it('refuses a revoked key after the cache is flushed', async () => {
    const created = await partner('POST', `/v1/workspaces/${workspaceId}/keys`, { label: 'flush' });
    await partner('DELETE', `/v1/workspaces/${workspaceId}/keys/${created.body.id}`);
    const keys = await stack.gateway.redis.keys(`${stack.prefix}:auth:*`);
    await stack.gateway.redis.del(...keys);
    expect(
      (await api(stack.gateway.url, created.body.key)('GET', `/v1/workspaces/${workspaceId}`)).status,
    ).toBe(401);
  });

  // Guarantee: 401 for every missing, malformed or unknown credential, in the envelope.
  it('refuses missing, malformed and unknown tokens', async () => {
    const cases: Record<string, string>[] = [
      {},
      { authorization: 'Basic abc' },
      { authorization: 'Bearer' },
      { authorization: 'Bearer svc_live_ with spaces' },
      { authorization: `Bearer svc_live_${'x'.repeat(40)}` },
    ];
    for (const headers of cases) {
      const res = await api(stack.gateway.url)('GET', '/v1/workspaces', undefined, headers);
      expect(res.status, JSON.stringify(headers)).toBe(401);
      expect(res.body.error.code).toBe('unauthorized');
    }
  });
});

describe('request logs', () => {
  // Guarantee: each /v1 request is logged with key id, route, status and timing (never a body),
  // without a database write on the request path, and purged after the retention.
  it('stores request logs in batches and purges old ones', async () => {
    const requestId = 'log-check-1';
    await partner('POST', '/v1/workspaces', { name: 'logged-body-marker' }, { 'x-request-id': requestId });
    const db = new pg.Client({ connectionString: stack.databaseUrl });
    await db.connect();
    try {
      const row = await eventually(async () => {
        const { rows } = await db.query('SELECT * FROM identity.request_logs WHERE request_id = $1', [
          requestId,
        ]);
        return rows[0];
      });
      expect(row).toMatchObject({
        method: 'POST',
        route: '/v1/workspaces',
        status: 201,
        key_id: expect.stringMatching(/^key_/),
      });
      expect(JSON.stringify(row)).not.toContain('logged-body-marker');
      await db.query(
        `UPDATE identity.request_logs SET created_at = now() - interval '8 days' WHERE request_id = $1`,
        [requestId],
      );
      const { purgeRequestLogs } = await import('../src/request-logs.ts');
      expect(await purgeRequestLogs(stack.identity.prisma, 7)).toBeGreaterThanOrEqual(1);
      expect(
        (await db.query('SELECT 1 FROM identity.request_logs WHERE request_id = $1', [requestId])).rowCount,
      ).toBe(0);
    } finally {
      await db.end();
    }
  });
});
