import { type ChildProcess, spawn } from 'node:child_process';
import { createServer } from 'node:net';
import { api } from '@svc/testing';
import { type Stack, startStack } from '@svc/testing/stack';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';

let stack: Stack;

beforeAll(async () => {
  stack = await startStack();
});
afterAll(() => stack.stop());

async function setLimit(partnerKey: string, perMinute: number) {
  const { setPartnerLimit } = await import('@svc/identity/admin');
  const { AuthCache } = await import('@svc/auth-cache');
  const partner = await stack.identity.prisma.apiKey.findFirstOrThrow({
    where: { prefix: partnerKey.slice(0, 13) },
    include: { partner: true },
  });
  await setPartnerLimit(
    stack.identity.prisma,
    new AuthCache(stack.gateway.redis, `${stack.prefix}:`),
    partner.partner.slug,
    perMinute,
  );
}

/** Waits, if needed, so a burst does not straddle two fixed buckets of the sliding window. */
async function awayFromWindowEdge(redis: Stack['gateway']['redis'], windowMs: number, burstMs: number) {
  const [seconds, micros] = await redis.time();
  const now = Number(seconds) * 1000 + Math.floor(Number(micros) / 1000);
  const left = windowMs - (now % windowMs);
  if (left < burstMs) await new Promise((resolve) => setTimeout(resolve, left + 50));
}

describe('rate limits', () => {
  // Guarantee: exactly 300 requests per key per minute pass; the 301st is refused with Retry-After,
  // a message naming the limit, and the X-RateLimit-* headers on every answer.
  it('passes the 300th request and refuses the 301st', async () => {
    const { key } = await stack.createPartner();
    const call = api(stack.gateway.url, key);
    await awayFromWindowEdge(stack.gateway.redis, 60_000, 10_000);
    const statuses: number[] = [];
    let last: Awaited<ReturnType<typeof call>> | undefined;
    for (let i = 1; i <= 300; i++) {
      last = await call('GET', '/v1/workspaces?limit=1');
      statuses.push(last.status);
    }
    expect(statuses.every((s) => s === 200)).toBe(true);
    expect(last?.headers.get('x-ratelimit-limit')).toBe('300');
    expect(last?.headers.get('x-ratelimit-remaining')).toBe('0');
    const refused = await call('GET', '/v1/workspaces?limit=1');
    expect(refused.status).toBe(429);
    expect(refused.body.error.code).toBe('rate_limited');
    expect(refused.body.error.message).toContain('300 requests per minute');
    expect(Number(refused.headers.get('retry-after'))).toBeGreaterThanOrEqual(1);
    expect(refused.headers.get('retry-after')).toMatch(/^\d+$/);
    expect(refused.headers.get('x-ratelimit-reset')).toMatch(/^\d+$/);
  });

  // Guarantee: capacity returns as the window slides, and requests made while limited count.
  it('gives capacity back as the window slides', async () => {
    const windowMs = 2_000;
    const gateway = await stack.startGateway({ RATE_LIMIT_WINDOW_MS: String(windowMs) });
    const { key } = await stack.createPartner();
    await setLimit(key, 5);
    const call = api(gateway.url, key);
    await awayFromWindowEdge(gateway.redis, windowMs, 500);
    for (let i = 0; i < 5; i++) expect((await call('GET', '/v1/workspaces')).status).toBe(200);
    const refused = await call('GET', '/v1/workspaces');
    expect(refused.status).toBe(429);
    const retryAfterS = Number(refused.headers.get('retry-after'));
    expect(retryAfterS).toBeGreaterThanOrEqual(1);
    expect(retryAfterS).toBeLessThanOrEqual(Math.ceil((2 * windowMs) / 1000));
    await new Promise((resolve) => setTimeout(resolve, retryAfterS * 1000));
    expect((await call('GET', '/v1/workspaces')).status).toBe(200);
  });

  // Guarantee: two gateway replicas share one budget per key; partner and workspace keys have separate ones.
  it('shares one budget across gateways and keeps workspace keys separate', async () => {
    const second = await stack.startGateway();
    const { key } = await stack.createPartner();
    await setLimit(key, 6);
    const viaFirst = api(stack.gateway.url, key);
    const viaSecond = api(second.url, key);
    await awayFromWindowEdge(stack.gateway.redis, 60_000, 5_000);
    const workspace = await viaFirst('POST', '/v1/workspaces', { name: 'shared' });
    const workspaceKey = await viaSecond('POST', `/v1/workspaces/${workspace.body.id}/keys`, {
      label: 'own budget',
    });
    for (let i = 0; i < 2; i++) expect((await viaFirst('GET', '/v1/workspaces')).status).toBe(200);
    for (let i = 0; i < 2; i++) expect((await viaSecond('GET', '/v1/workspaces')).status).toBe(200);
    expect((await viaFirst('GET', '/v1/workspaces')).status).toBe(429);
    expect((await viaSecond('GET', '/v1/workspaces')).status).toBe(429);
    const own = api(second.url, workspaceKey.body.key);
    expect((await own('GET', `/v1/workspaces/${workspace.body.id}`)).status).toBe(200);
  });
});

describe('Redis outage', () => {
  let redis: ChildProcess;
  let outage: Stack;

  beforeAll(async () => {
    const port = await freePort();
    redis = spawn(
      'redis-server',
      ['--port', String(port), '--bind', '127.0.0.1', '--save', '', '--appendonly', 'no'],
      { stdio: 'ignore' },
    );
    await new Promise((resolve) => setTimeout(resolve, 300));
    outage = await startStack({ REDIS_URL: `redis://127.0.0.1:${port}` });
  });
  afterAll(async () => {
    redis.kill('SIGKILL');
    await outage.stop();
  });

  // Guarantee: without Redis the gateway fails closed with a clear 503, quickly, instead of hanging
  // or letting unchecked traffic through.
  it('answers 503 when Redis is down', async () => {
    const { key } = await outage.createPartner();
    const call = api(outage.gateway.url, key);
    expect((await call('GET', '/v1/workspaces')).status).toBe(200);
    redis.kill('SIGKILL');
    await new Promise((resolve) => setTimeout(resolve, 200));
    const started = Date.now();
    const res = await call('GET', '/v1/workspaces');
    expect(res.status).toBe(503);
    expect(res.body.error).toEqual({
      code: 'service_unavailable',
      message: expect.stringContaining('Redis'),
    });
    expect(Date.now() - started).toBeLessThan(3_000);
  });
});

function freePort(): Promise<number> {
  return new Promise((resolve) => {
    const server = createServer().listen(0, '127.0.0.1', () => {
      const address = server.address();
      server.close(() => resolve(typeof address === 'object' && address ? address.port : 0));
    });
  });
}
