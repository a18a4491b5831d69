import { createPool } from '@svc/db';
import { createLogger } from '@svc/logging';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { api, connectThroughLink, createUser, eventually, newLink } from '../src/index.ts';
import { PrivatePostgres } from '../src/private-postgres.ts';
import { type System, startSystem } from '../src/system.ts';

/**
 * A Postgres of this file's own, restarted (fast shutdown: every session terminated with 57P01,
 * the server down for a moment) under a pool client, and under the whole system, each service in
 * a process of its own, in the middle of a stream of requests that read and write every
 * service's database. Every service with a pool runs (identity, accounts, webhooks, publishing,
 * inbox), so none of them may die of it.
 */
let postgres: PrivatePostgres;

beforeAll(async () => {
  postgres = await PrivatePostgres.start();
}, 180_000);
afterAll(() => postgres?.stop());

describe('the system', () => {
  let system: System;
  let call: ReturnType<typeof api>;
  let workspace = '';
  let page = '';

  beforeAll(async () => {
    system = await startSystem({
      services: ['identity', 'accounts', 'webhooks', 'publishing', 'inbox', 'gateway'],
      run: 'source',
      databaseUrl: postgres.databaseUrl,
      env: { UNAUTHENTICATED_LIMIT_PER_MINUTE: '100000' },
    });
    call = api(system.gatewayUrl, (await system.createPartner(undefined, { limitPerMinute: 100_000 })).key);
    const user = await createUser(system, [{ name: 'Restart Bakery' }]);
    const link = await newLink(call);
    workspace = link.workspaceId;
    const sandbox = { url: system.addresses.sandboxUrl };
    await connectThroughLink({ sandbox }, link.url, 'page_network', {
      userId: user.user.id,
      decision: 'approve',
    });
    page = (await call('GET', `/v1/workspaces/${workspace}/accounts`)).body.data[0].id;
  }, 180_000);
  afterAll(() => system?.stop());

  /** One request of each kind that reaches a service's database, reads and writes. */
  const REQUESTS: [string, () => ReturnType<typeof call>][] = [
    ['identity read', () => call('GET', '/v1/workspaces')],
    ['identity write', () => call('PATCH', `/v1/workspaces/${workspace}`, { name: `Bakery ${Date.now()}` })],
    ['accounts read', () => call('GET', `/v1/workspaces/${workspace}/accounts`)],
    ['publishing write', () => call('POST', '/v1/posts', { workspace, caption: 'During', targets: [page] })],
    ['publishing read', () => call('GET', `/v1/posts?workspace=${workspace}&limit=1`)],
    ['webhooks read', () => call('GET', '/v1/events?limit=1')],
    ['inbox read', () => call('GET', `/v1/conversations?workspace=${workspace}&limit=1`)],
  ];

  // Guarantee: a Postgres restart kills no service (every pool and client survives a lost
  // connection and opens new ones), a request that meets the unavailable database answers 503
  // service_unavailable (retryable), never 500, and every kind of request succeeds again after it.
  it('survives a database restart under a stream of requests', async () => {
    const answers: { kind: string; status: number; code?: string }[] = [];
    let streaming = true;
    const stream = async () => {
      for (let i = 0; streaming; i++) {
        const [kind, send] = REQUESTS[i % REQUESTS.length] as (typeof REQUESTS)[number];
        const answer = await send().catch((error: Error) => ({
          status: 0,
          body: { error: { code: error.message } },
        }));
        answers.push({ kind, status: answer.status, code: answer.body?.error?.code });
      }
    };
    const streams = Array.from({ length: 4 }, stream);
    await new Promise((resolve) => setTimeout(resolve, 1_500));
    await postgres.restart();
    await new Promise((resolve) => setTimeout(resolve, 3_000));
    streaming = false;
    await Promise.all(streams);

    const exited = system
      .children()
      .filter((c) => c.process.exitCode !== null || c.process.signalCode !== null);
    expect(exited.map((c) => `${c.label} exited ${c.process.exitCode ?? c.process.signalCode}`)).toEqual([]);
    const wrong: Record<string, number> = {};
    for (const a of answers)
      if (!(a.status < 300 || (a.status === 503 && a.code === 'service_unavailable'))) {
        const key = `${a.kind}: ${a.status} ${a.code}`;
        wrong[key] = (wrong[key] ?? 0) + 1;
      }
    expect(wrong).toEqual({});
    expect(answers.filter((a) => a.status === 503).length, 'some requests met the restart').toBeGreaterThan(
      0,
    );
    expect(answers.length).toBeGreaterThan(REQUESTS.length);
    for (const [kind, send] of REQUESTS)
      await eventually(async () => ((await send()).status < 300 ? kind : undefined));
  }, 120_000);
});

// Guarantee: a pool client lent out (to a transaction, to Prisma's adapter) when its connection
// is cut does not end the process with an unheard 'error' event; the pool discards it when it comes
// back and the next query gets a new connection.
it('keeps a lent client from ending the process when its connection is cut', async () => {
  const pool = createPool(postgres.databaseUrl, 'public', 2, createLogger('test', { level: 'silent' }));
  try {
    const client = await pool.connect();
    await client.query('SELECT 1');
    await postgres.restart();
    await eventually(() => ((client as unknown as { _queryable: boolean })._queryable ? undefined : true));
    client.release();
    expect((await eventually(() => pool.query('SELECT 1 AS one').catch(() => undefined))).rows).toEqual([
      { one: 1 },
    ]);
  } finally {
    await pool.end();
  }
}, 60_000);
