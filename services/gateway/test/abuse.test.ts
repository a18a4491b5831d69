import { randomBytes } from 'node:crypto';
import { readFileSync } from 'node:fs';
import { hashToken } from '@svc/crypto';
import { api, CookieJar, consent, createUser, eventually } from '@svc/testing';
import { type System, startSystem } from '@svc/testing/system';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { webpBomb } from '../../publishing/test/image-bomb.ts';
import { openStream } from './embed-stream-reader.ts';

/**
 * The abuse suite: a hostile tenant (and a curious end user) against the real stack, with the
 * gateway and publishing as processes of their own, so "the service stays up" is measured on the
 * processes that would go down. Each case is one hostile move and what must hold against it; the
 * last line printed says how many ran and how many held.
 */

/** Publishing's resident memory may not pass this while a decompression bomb is uploaded (it took 2.5 GiB). */
const PUBLISHING_RSS_BOUND_MIB = 600;
/** What hostile uploads may add to the slowest answer of another tenant's read and the health probe. */
const RESPONSIVE_MS = 200;

let system: System;
let gateway: string;
let attacker: ReturnType<typeof api>;
let attackerKey: string;
let attackerWorkspace: string;
let bystander: ReturnType<typeof api>;
let bystanderWorkspace: string;
const tally = { ran: 0, held: 0 };

/** One hostile case: counted, and held only when every expectation in it passed. */
function hostile(name: string, run: () => Promise<void>, timeout = 30_000) {
  it(
    name,
    async () => {
      tally.ran++;
      await run();
      tally.held++;
    },
    timeout,
  );
}

beforeAll(async () => {
  system = await startSystem({
    services: ['identity', 'accounts', 'webhooks', 'publishing', 'inbox', 'gateway'],
    run: { gateway: 'source', publishing: 'source' },
    env: {
      // Production's network rules: no fetch or delivery to loopback or private addresses.
      ALLOW_PRIVATE_NETWORKS: 'false',
      WEBHOOK_ALLOW_PRIVATE_NETWORKS: 'false',
      // One proxy in front, as deploy/k8s sets it.
      TRUST_PROXY: '1',
    },
  });
  gateway = system.gatewayUrl;
  const bad = await system.createPartner(undefined, { limitPerMinute: 100_000 });
  attackerKey = bad.key;
  attacker = api(gateway, bad.key);
  attackerWorkspace = (await attacker('POST', '/v1/workspaces', { name: 'Hostile Co' })).body.id;
  const good = await system.createPartner(undefined, { limitPerMinute: 100_000 });
  bystander = api(gateway, good.key);
  bystanderWorkspace = (await bystander('POST', '/v1/workspaces', { name: 'Innocent Bakery' })).body.id;
}, 120_000);

afterAll(async () => {
  console.log(`abuse suite: ${tally.ran} hostile cases run, ${tally.held} held`);
  await system?.stop();
});

/** One round of probes: the health endpoint and another tenant's read, both answered; how long it took. */
async function probeOnce(): Promise<number> {
  const started = performance.now();
  const [health, read] = await Promise.all([
    fetch(`${gateway}/healthz`),
    bystander('GET', `/v1/posts?workspace=${bystanderWorkspace}`),
  ]);
  expect(health.status).toBe(200);
  expect(read.status).toBe(200);
  return performance.now() - started;
}

/**
 * Runs `attack` while probing every 50 ms, and answers how much the attack added to the slowest
 * probe: the same probes are timed for a moment before it, so a machine busy with other tests
 * (CI runs files side by side) is not taken for the attack's effect. A process the attack took
 * down or blocked would add seconds.
 */
async function whileProbing<T>(attack: () => Promise<T>): Promise<{ result: T; addedMs: number }> {
  await probeOnce(); // warm: a first request's cost is not the attack's
  let baselineMs = 0;
  for (let round = 0; round < 6; round++) {
    baselineMs = Math.max(baselineMs, await probeOnce());
    await new Promise((resolve) => setTimeout(resolve, 50));
  }
  let slowestMs = 0;
  let running = true;
  const probing = (async () => {
    while (running) {
      slowestMs = Math.max(slowestMs, await probeOnce());
      await new Promise((resolve) => setTimeout(resolve, 50));
    }
  })();
  try {
    const result = await attack();
    return { result, addedMs: slowestMs - baselineMs };
  } finally {
    running = false;
    await probing;
  }
}

/** Resident memory of a process, from /proc (Linux). */
function rssMiB(pid: number): number {
  const line = readFileSync(`/proc/${pid}/status`, 'utf8')
    .split('\n')
    .find((l) => l.startsWith('VmRSS:'));
  return Number(line?.split(/\s+/)[1] ?? 0) / 1024;
}

async function upload(bytes: Buffer) {
  const form = new FormData();
  form.append('workspace', attackerWorkspace);
  form.append('file', new Blob([bytes]), 'innocent.png');
  const response = await fetch(`${gateway}/v1/media`, {
    method: 'POST',
    headers: { authorization: `Bearer ${attackerKey}` },
    body: form,
  });
  const body = (await response.json()) as { error: { code: string; message: string; field?: string } };
  return { status: response.status, body };
}

describe('inputs that would take a shared process down', () => {
  hostile('markup that made type sniffing backtrack (ReDoS)', async () => {
    const bait = Buffer.from(`${'<!---->'.repeat(5_000)}<svg>`);
    const { result, addedMs } = await whileProbing(() => upload(bait));
    expect(result.status).toBe(400);
    expect(result.body.error).toMatchObject({ code: 'validation_error', field: 'file' });
    expect(addedMs).toBeLessThan(RESPONSIVE_MS);
  });

  hostile('a 10 KB WebP that decodes to 16383x16383 (decompression bomb)', async () => {
    const pid = system.child('publishing').process.pid ?? 0;
    let peak = rssMiB(pid);
    const sampler = setInterval(() => {
      peak = Math.max(peak, rssMiB(pid));
    }, 20);
    try {
      const bomb = await webpBomb(16383, 16383);
      const { result, addedMs } = await whileProbing(() => Promise.all([1, 2, 3].map(() => upload(bomb))));
      for (const answer of result) {
        expect(answer.status).toBe(400);
        expect(answer.body.error.message).toContain('16383x16383');
      }
      expect(addedMs).toBeLessThan(RESPONSIVE_MS);
    } finally {
      clearInterval(sampler);
    }
    console.log(
      `publishing's peak RSS during three bomb uploads: ${Math.round(peak)} MiB (bound ${PUBLISHING_RSS_BOUND_MIB})`,
    );
    expect(peak).toBeLessThan(PUBLISHING_RSS_BOUND_MIB);
  });
});

describe("one tenant spending everyone's capacity", () => {
  hostile('200 event streams on one embed session', async () => {
    const session = await attacker('POST', '/v1/embed-sessions', {
      workspace: attackerWorkspace,
      allowed_origins: ['https://app.hostile.example'],
    });
    const streams = await Promise.all(
      Array.from({ length: 200 }, () => openStream(gateway, session.body.token)),
    );
    const statuses = streams.map((stream) => stream.response.status);
    await Promise.all(streams.map((stream) => stream.close()));
    expect(statuses.filter((status) => status === 200)).toHaveLength(3);
    expect(statuses.filter((status) => status === 429)).toHaveLength(197);
  });

  hostile('an MCP batch of 100 calls on a budget of 40', async () => {
    const { key } = await system.createPartner(undefined, { limitPerMinute: 40 });
    const workspace = (await api(gateway, key)('POST', '/v1/workspaces', { name: 'Batchers' })).body.id;
    const batch = Array.from({ length: 100 }, (_, i) => ({
      jsonrpc: '2.0',
      id: i,
      method: 'tools/call',
      params: { name: 'list_accounts', arguments: {} },
    }));
    const response = await fetch(`${gateway}/mcp`, {
      method: 'POST',
      headers: {
        authorization: `Bearer ${key}`,
        'content-type': 'application/json',
        accept: 'application/json, text/event-stream',
        'mcp-protocol-version': '2025-11-25',
        'x-service-workspace': workspace,
      },
      body: JSON.stringify(batch),
    });
    const answers = (await response.json()) as {
      result?: unknown;
      error?: { data?: { retry_after_seconds?: number } };
    }[];
    // 40 a minute: the workspace took one, the batch's own request one, 38 more calls fit.
    expect(answers.filter((a) => a.result !== undefined)).toHaveLength(39);
    const refused = answers.filter((a) => a.error !== undefined);
    expect(refused).toHaveLength(61);
    expect(refused.every((a) => (a.error?.data?.retry_after_seconds ?? 0) >= 1)).toBe(true);
  });

  hostile(
    '2,000 random bearer tokens from one address',
    async () => {
      const statuses: number[] = [];
      const tokens = Array.from({ length: 2_000 }, () => `svc_live_${randomBytes(24).toString('hex')}`);
      for (let i = 0; i < tokens.length; i += 50)
        statuses.push(
          ...(await Promise.all(
            tokens
              .slice(i, i + 50)
              .map(async (token) => (await api(gateway, token)('GET', '/v1/workspaces')).status),
          )),
        );
      const looked = statuses.filter((status) => status === 401).length;
      // The budget, one batch in flight when it ran out, and one lookup a second after it.
      expect(looked).toBeLessThanOrEqual(30 + 50 + 10);
      expect(statuses.filter((status) => status === 429).length).toBeGreaterThanOrEqual(2_000 - 90);
      // The refused tokens never reached identity: no negative-cache entry was written for any of
      // them. (The lookups a second past the budget did reach it, whenever in the run they fell.)
      const refused = tokens.filter((_, i) => statuses[i] === 429);
      const redis = (await import('ioredis')).Redis;
      const client = new redis();
      try {
        const written = await Promise.all(
          refused.map((token) => client.exists(`${system.prefix}:auth:${hashToken(token)}`)),
        );
        expect(written.reduce((a, b) => a + b, 0)).toBe(0);
      } finally {
        client.disconnect();
      }
      // A real key from the same address still works.
      expect((await attacker('GET', '/v1/workspaces')).status).toBe(200);
    },
    60_000,
  );

  hostile('spoofed X-Forwarded-For to escape the hosted pages per-IP limit', async () => {
    const statuses: number[] = [];
    for (let i = 0; i < 70; i++) {
      const response = await fetch(`${gateway}/connect/cnt_nothing`, {
        headers: { 'x-forwarded-for': `${i}.${i}.${i}.${i}, 198.51.100.77` },
      });
      await response.text();
      statuses.push(response.status);
    }
    // 60 a minute per client: the client is the address the one trusted proxy saw.
    expect(statuses.slice(0, 60).includes(429)).toBe(false);
    expect(statuses.slice(60).every((status) => status === 429)).toBe(true);
  });
});

describe('rules that would let a tenant reach further', () => {
  hostile('an OAuth callback carried to another browser', async () => {
    const link = await attacker('POST', `/v1/workspaces/${attackerWorkspace}/connect-links`, {});
    const sender = new CookieJar();
    const started = await sender.fetch(`${link.body.url}/page_network/start`);
    const dialog = new URL(started.headers.get('location') ?? '');
    const victim = await createUser(system, [{ name: 'Victim Pages' }]);
    const callback = await consent({ sandbox: { url: system.addresses.sandboxUrl } }, dialog, {
      userId: victim.user.id,
      decision: 'approve',
    });
    const landed = await new CookieJar().fetch(callback);
    expect(landed.status).toBe(400);
    expect(await landed.text()).toContain('Open the connect link again in this browser');
    const accounts = await attacker('GET', `/v1/workspaces/${attackerWorkspace}/accounts`);
    expect(accounts.body.total).toBe(0);
  });

  hostile("a workspace key claiming another customer's external_id", async () => {
    const key = await attacker('POST', `/v1/workspaces/${attackerWorkspace}/keys`, { label: 'leaked' });
    const own = api(gateway, key.body.key);
    const claimed = await own('PATCH', `/v1/workspaces/${attackerWorkspace}`, { external_id: 'cust-future' });
    expect(claimed.status).toBe(403);
    expect(claimed.body.error.code).toBe('forbidden');
    expect((await attacker('GET', `/v1/workspaces/${attackerWorkspace}`)).body.external_id).toBeNull();
  });

  hostile('a DM to an account the user revoked', async () => {
    const workspace = (await attacker('POST', '/v1/workspaces', { name: 'Revoked Co' })).body.id;
    const link = await attacker('POST', `/v1/workspaces/${workspace}/connect-links`, {});
    const user = await createUser(system, [{ name: 'Soon Revoked' }]);
    const browser = new CookieJar();
    const started = await browser.fetch(`${link.body.url}/page_network/start`);
    const callback = await consent(
      { sandbox: { url: system.addresses.sandboxUrl } },
      new URL(started.headers.get('location') ?? ''),
      { userId: user.user.id, decision: 'approve' },
    );
    expect((await browser.fetch(callback)).status).toBeLessThan(400);
    const [account] = (await attacker('GET', `/v1/workspaces/${workspace}/accounts`)).body.data;
    await system.sandboxControl('POST', `/__sandbox/users/${user.user.id}/deauthorize`);
    await eventually(async () =>
      (await attacker('GET', `/v1/accounts/${account.id}`)).body.status === 'revoked' ? true : undefined,
    );
    await system.sandboxControl('POST', `/__sandbox/pages/${account.platform_id}/messages`, {
      from: { name: 'Stranger' },
      text: 'let me in',
    });
    await eventually(() =>
      system.logs.find(
        (l) => l.msg === 'webhook dropped: the account is not active' && l.account === account.id,
      ),
    );
    const conversations = await attacker('GET', `/v1/conversations?workspace=${workspace}`);
    expect(conversations.body.data).toEqual([]);
    const events = await attacker('GET', `/v1/events?workspace=${workspace}&type=message.received`);
    expect(events.body.data).toEqual([]);
  });

  hostile('a foreign Origin on /mcp (DNS rebinding)', async () => {
    const response = await fetch(`${gateway}/mcp`, {
      method: 'POST',
      headers: {
        authorization: `Bearer ${attackerKey}`,
        origin: 'http://rebound.attacker.example',
        'content-type': 'application/json',
        accept: 'application/json, text/event-stream',
        'x-service-workspace': attackerWorkspace,
      },
      body: JSON.stringify({ jsonrpc: '2.0', id: 1, method: 'ping' }),
    });
    expect(response.status).toBe(403);
    expect(((await response.json()) as { error: { code: string } }).error.code).toBe('forbidden');
  });
});

describe('server-side requests to where a tenant may not reach (SSRF)', () => {
  const corpus = [
    'http://127.0.0.1/x.png',
    'http://localhost/x.png',
    'http://2130706433/x.png',
    'http://0x7f.1/x.png',
    'http://[::1]/x.png',
    'http://[::ffff:127.0.0.1]/x.png',
    'http://[::ffff:0:7f00:1]/x.png',
    'http://[64:ff9b::a9fe:a9fe]/latest/meta-data',
    'http://[64:ff9b:1::a00:1]/x.png',
    'http://169.254.169.254/latest/meta-data',
    'http://[fd00:ec2::254]/latest/meta-data',
    'http://10.0.0.1/x.png',
    'http://100.64.0.1/x.png',
    'http://0.0.0.0/x.png',
  ];
  for (const url of corpus)
    hostile(`media fetched from ${url}`, async () => {
      const answer = await attacker('POST', '/v1/media', { workspace: attackerWorkspace, url });
      expect(answer.status).toBe(400);
      expect(answer.body.error).toMatchObject({ code: 'validation_error', field: 'url' });
      expect(answer.body.error.message).toContain('not allowed');
      // Nothing about our network: neither the address a name resolved to nor its kind.
      expect(answer.body.error.message).not.toMatch(/127\.0\.0\.1|loopback|private|link-local|10\.0\.0\.1/);
    });
});
