import { randomBytes } from 'node:crypto';
import { AuthCache } from '@svc/auth-cache';
import { parseConfig } from '@svc/config';
import { hashToken } from '@svc/crypto';
import { api, eventually } from '@svc/testing';
import { type Stack, startStack } from '@svc/testing/stack';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { gatewayConfigSchema } from '../src/config.ts';
import { openStream } from './embed-stream-reader.ts';

// One tenant must not spend another's share of the gateway: streams, batch calls, failed logins,
// per-IP budgets. Each case plays the hostile client against the real stack.

let stack: Stack;
let partner: ReturnType<typeof api>;
let partnerKey: string;
let workspace: string;

beforeAll(async () => {
  stack = await startStack({ UNAUTHENTICATED_LIMIT_PER_MINUTE: '100000' });
  const created = await stack.createPartner();
  partnerKey = created.key;
  partner = api(stack.gateway.url, created.key);
  workspace = (await partner('POST', '/v1/workspaces', { name: 'Shared Bakery' })).body.id;
});
afterAll(() => stack.stop());

async function mint(allowedSurfaces = ['connect', 'inbox', 'publish']) {
  const res = await partner('POST', '/v1/embed-sessions', {
    workspace,
    allowed_origins: ['https://app.partner.example'],
    surfaces: allowedSurfaces,
  });
  if (res.status !== 201) throw new Error(`mint: ${res.status} ${JSON.stringify(res.body)}`);
  return res.body as { id: string; token: string };
}

describe('widget event streams', () => {
  // Guarantee: one session holds at most EMBED_STREAMS_PER_SESSION streams (across replicas); the
  // next is a 429 with Retry-After in the envelope, and closing one frees its slot.
  it('caps the streams of one session', async () => {
    const session = await mint();
    const open = await Promise.all([1, 2, 3].map(() => openStream(stack.gateway.url, session.token)));
    for (const stream of open) expect(stream.response.status).toBe(200);
    const refused = await fetch(`${stack.gateway.url}/v1/embed/stream`, {
      headers: { authorization: `Bearer ${session.token}` },
    });
    expect(refused.status).toBe(429);
    expect(Number(refused.headers.get('retry-after'))).toBeGreaterThanOrEqual(1);
    const body = (await refused.json()) as { error: { code: string; message: string } };
    expect(body.error.code).toBe('rate_limited');
    expect(body.error.message).toContain('3 open event streams per embed session');
    await open[0]?.close();
    await eventually(async () => {
      const again = await openStream(stack.gateway.url, session.token);
      if (again.response.status === 200) return again;
      await again.close();
      return undefined;
    }, 3_000).then((again) => again.close());
    await Promise.all(open.slice(1).map((stream) => stream.close()));
  });

  // Guarantee: a partner's sessions together hold at most EMBED_STREAMS_PER_PARTNER streams,
  // counted across gateway replicas (here: two gateways sharing Redis).
  it('caps the streams of one partner across replicas', async () => {
    const env = { EMBED_STREAMS_PER_PARTNER: '2' };
    const [one, two] = await Promise.all([stack.startGateway(env), stack.startGateway(env)]);
    const first = await openStream(one.url, (await mint()).token);
    const second = await openStream(two.url, (await mint()).token);
    expect([first.response.status, second.response.status]).toEqual([200, 200]);
    const third = await fetch(`${one.url}/v1/embed/stream`, {
      headers: { authorization: `Bearer ${(await mint()).token}` },
    });
    expect(third.status).toBe(429);
    expect(((await third.json()) as { error: { message: string } }).error.message).toContain(
      '2 open event streams per partner',
    );
    await Promise.all([first.close(), second.close()]);
  });

  // Guarantee: a stream re-checks its session on a short interval, so a session revoked without
  // the end signal reaching this gateway (an at-most-once NATS message) still ends its stream.
  it('ends a stream whose session was revoked while the end signal was missed', async () => {
    const other = await stack.startGateway({ EMBED_SESSION_RECHECK_MS: '200' });
    const session = await mint();
    const stream = await openStream(other.url, session.token);
    await eventually(() => (stream.comments.includes('connected') ? true : undefined));
    // What identity writes before it commits an end, without the signal that normally follows.
    await new AuthCache(stack.gateway.redis, `${stack.prefix}:`).markRevoked([hashToken(session.token)]);
    await eventually(() => (stream.ended ? true : undefined), 3_000);
    expect(stream.ofType('session.expired')).toEqual([{ reason: 'ended' }]);
  });
});

describe('an MCP batch', () => {
  const postMcp = (key: string, body: unknown, headers: Record<string, string> = {}) =>
    fetch(`${stack.gateway.url}/mcp`, {
      method: 'POST',
      headers: {
        authorization: `Bearer ${key}`,
        'content-type': 'application/json',
        accept: 'application/json, text/event-stream',
        'mcp-protocol-version': '2025-11-25',
        'x-service-workspace': workspace,
        ...headers,
      },
      body: JSON.stringify(body),
    });

  // Guarantee: each call of a batch counts against the key's budget like a REST request; the calls
  // past the budget are not run and each answers a JSON-RPC error with the retry time.
  it('charges each call and refuses those past the budget', async () => {
    const { key } = await stack.system.createPartner(undefined, { limitPerMinute: 10 });
    const batch = Array.from({ length: 25 }, (_, i) => ({
      jsonrpc: '2.0',
      id: i + 1,
      method: 'tools/call',
      params: { name: 'list_accounts', arguments: {} },
    }));
    const other = api(stack.gateway.url, key);
    const ws = (await other('POST', '/v1/workspaces', { name: 'Batch Bakery' })).body.id;
    const response = await postMcp(key, batch, { 'x-service-workspace': ws });
    expect(response.status).toBe(200);
    const answers = (await response.json()) as {
      id: number;
      result?: unknown;
      error?: { code: number; data: { retry_after_seconds: number; error: { code: string } } };
    }[];
    expect(answers.map((a) => a.id)).toEqual(batch.map((b) => b.id));
    const served = answers.filter((a) => a.result !== undefined);
    const refused = answers.filter((a) => a.error !== undefined);
    // The workspace creation took 1 of 10; the batch's own request another.
    expect(served.map((a) => a.id)).toEqual([1, 2, 3, 4, 5, 6, 7, 8, 9]);
    expect(refused).toHaveLength(16);
    for (const answer of refused) {
      expect(answer.error?.code).toBe(-32029);
      expect(answer.error?.data.error.code).toBe('rate_limited');
      expect(answer.error?.data.retry_after_seconds).toBeGreaterThanOrEqual(1);
    }
    // The budget is spent: the next REST request is refused too.
    expect((await other('GET', '/v1/workspaces')).status).toBe(429);
  });

  // Guarantee: a browser Origin the deployment did not allow is refused (403 in the envelope)
  // before authentication (DNS rebinding); no Origin, or an allowed one, passes.
  it('refuses a foreign Origin', async () => {
    const ping = { jsonrpc: '2.0', id: 1, method: 'ping' };
    const foreign = await postMcp(partnerKey, ping, { origin: 'https://evil.example' });
    expect(foreign.status).toBe(403);
    const body = (await foreign.json()) as { error: { code: string; message: string } };
    expect(body.error.code).toBe('forbidden');
    expect(body.error.message).toContain('MCP_ALLOWED_ORIGINS');
    expect((await postMcp(partnerKey, ping)).status).toBe(200);
    const allowing = await stack.startGateway({ MCP_ALLOWED_ORIGINS: 'https://inspector.example' });
    const allowed = await fetch(`${allowing.url}/mcp`, {
      method: 'POST',
      headers: {
        authorization: `Bearer ${partnerKey}`,
        'content-type': 'application/json',
        accept: 'application/json, text/event-stream',
        'mcp-protocol-version': '2025-11-25',
        'x-service-workspace': workspace,
        origin: 'https://inspector.example',
      },
      body: JSON.stringify(ping),
    });
    expect(allowed.status).toBe(200);
  });
});

describe('failed authentication', () => {
  // Guarantee: unknown bearers from one address are throttled after AUTH_FAILURES_PER_MINUTE: past
  // it, one credential a second is looked up and the rest are answered 429 with Retry-After without
  // reaching identity (no cache entry appears for them); a valid key from the same address, cached
  // or brand new, still passes.
  it('throttles guessing per address without shutting out a valid key', async () => {
    const gateway = await stack.startGateway({ AUTH_FAILURES_PER_MINUTE: '5' });
    const guess = () => `svc_live_${randomBytes(24).toString('hex')}`;
    const statuses: number[] = [];
    for (let i = 0; i < 5; i++)
      statuses.push((await api(gateway.url, guess())('GET', '/v1/workspaces')).status);
    expect(statuses).toEqual([401, 401, 401, 401, 401]);
    const tokens = Array.from({ length: 20 }, guess);
    const answers = await Promise.all(
      tokens.map((token) => api(gateway.url, token)('GET', '/v1/workspaces')),
    );
    const throttled = answers.filter((answer) => answer.status === 429);
    expect(throttled.length).toBeGreaterThanOrEqual(18);
    expect(answers.every((answer) => answer.status === 429 || answer.status === 401)).toBe(true);
    const refusal = throttled[0];
    expect(refusal?.body.error.code).toBe('rate_limited');
    expect(refusal?.body.error.message).toContain('failed authentications');
    expect(Number(refusal?.headers.get('retry-after'))).toBeGreaterThanOrEqual(1);
    const untouched = tokens.filter((_, i) => answers[i]?.status === 429);
    const entries = await Promise.all(
      untouched.map((token) => stack.gateway.redis.exists(`${stack.prefix}:auth:${hashToken(token)}`)),
    );
    expect(entries.reduce((a, b) => a + b, 0)).toBe(0);
    expect((await api(gateway.url, partnerKey)('GET', '/v1/workspaces')).status).toBe(200);
    const fresh = await partner('POST', `/v1/workspaces/${workspace}/keys`, { label: 'new' });
    const passed = await eventually(async () => {
      const answer = await api(gateway.url, fresh.body.key)('GET', `/v1/workspaces/${workspace}`);
      return answer.status === 200 ? answer : undefined;
    }, 3_000);
    expect(passed.status).toBe(200);
  });
});

describe('forwarded client addresses', () => {
  // Guarantee: with TRUST_PROXY as a hop count, the client is the address the trusted proxy saw
  // (the right-most entry); whatever a client writes further left does not buy a fresh per-IP budget.
  it('ignores the addresses a client writes in X-Forwarded-For', async () => {
    const gateway = await stack.startGateway({ TRUST_PROXY: '1', UNAUTHENTICATED_LIMIT_PER_MINUTE: '3' });
    const statuses: number[] = [];
    for (let i = 0; i < 5; i++) {
      const response = await fetch(`${gateway.url}/connect/cnt_missing`, {
        headers: { 'x-forwarded-for': `10.0.${i}.1, 203.0.113.7` },
      });
      statuses.push(response.status);
    }
    expect(statuses.slice(0, 3).every((status) => status !== 429)).toBe(true);
    expect(statuses.slice(3)).toEqual([429, 429]);
    // Another client behind the same proxy has its own budget.
    const other = await fetch(`${gateway.url}/connect/cnt_missing`, {
      headers: { 'x-forwarded-for': '203.0.113.8' },
    });
    expect(other.status).not.toBe(429);
  });

  // Guarantee: "trust every proxy" is refused at start-up with a message saying what to set.
  it('refuses TRUST_PROXY=true at start-up', () => {
    const trustProxy = (value: string) => {
      const env = { APP_ENV: 'development', TRUST_PROXY: value };
      return parseConfig(gatewayConfigSchema(env), env).TRUST_PROXY;
    };
    expect(() => trustProxy('true')).toThrow(/TRUST_PROXY .*number of proxies/);
    expect(() => trustProxy('10.0.0.0/33')).toThrow(/not an IP address or CIDR/);
    expect(trustProxy('10.0.0.0/8, 192.168.1.1')).toEqual(['10.0.0.0/8', '192.168.1.1']);
    expect(trustProxy('2')).toBe(2);
    expect(trustProxy('false')).toBe(false);
  });
});
