import { metaJson, signatureHeaders } from '@svc/graph-sandbox';
import { api, connectThroughLink, createUser, eventually, recordEvents, uniquePrefix } from '@svc/testing';
import { FAST_GRAPH_RETRIES } from '@svc/testing/stack';
import { type System, startSystem } from '@svc/testing/system';
import pg from 'pg';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { dataOf } from './harness.ts';

/**
 * Crash safety of the intake: the inbox runs as its own process (its real entry point) and is
 * killed with SIGKILL in the middle of a burst of 1,000 inbound messages. Every message must be
 * stored once and announced once: nothing lost, nothing twice.
 */
const APP_SECRET = 'sandbox-app-secret-0123456789abcdef';
const MESSAGES = 1_000;
const PER_BODY = 10;

let system: System;
let recorder: Awaited<ReturnType<typeof recordEvents>>;
let db: pg.Pool;
let pageId: string;

beforeAll(async () => {
  system = await startSystem({
    services: ['identity', 'accounts', 'inbox', 'gateway'],
    run: { inbox: 'source' },
    prefix: uniquePrefix('inboxcrash'),
    env: { LOG_LEVEL: 'silent', UNAUTHENTICATED_LIMIT_PER_MINUTE: '100000' },
    serviceEnv: { accounts: FAST_GRAPH_RETRIES, inbox: FAST_GRAPH_RETRIES },
  });
  db = new pg.Pool({ connectionString: system.databaseUrl, max: 2, options: '-c search_path=inbox' });
  recorder = await recordEvents(system.prefix);
  const { key } = await system.createPartner(uniquePrefix('crash-'));
  const call = api(system.gatewayUrl, key);
  const workspace = (await call('POST', '/v1/workspaces', { name: 'Crash' })).body.id as string;
  const stack = { sandbox: { url: system.addresses.sandboxUrl }, sandboxControl: system.sandboxControl };
  const user = await createUser(stack, [{ name: 'Crash Page' }]);
  const link = (await call('POST', `/v1/workspaces/${workspace}/connect-links`, {})).body;
  await connectThroughLink(stack, link.url, 'page_network', { userId: user.user.id, decision: 'approve' });
  pageId = user.pages[0]?.id as string;
}, 120_000);
afterAll(async () => {
  await recorder.close();
  await db.end();
  await system.stop();
});

/** Meta's Messenger webhook with several messages in one body, signed over its exact bytes. */
function webhookBody(first: number, run: string): string {
  const now = Date.now();
  const messaging = Array.from({ length: PER_BODY }, (_, i) => ({
    sender: { id: `70${(first + i) % 20}`.padEnd(16, '0') },
    recipient: { id: pageId },
    timestamp: now,
    message: { mid: `m_${run}_${first + i}`, text: `burst ${first + i}` },
  }));
  return metaJson({ object: 'page', entry: [{ id: pageId, time: now, messaging }] });
}

async function post(body: string): Promise<number> {
  const response = await fetch(`${system.gatewayUrl}/webhooks/meta`, {
    method: 'POST',
    headers: { 'content-type': 'application/json', ...signatureHeaders(APP_SECRET, body) },
    body,
  });
  await response.arrayBuffer();
  return response.status;
}

const stored = async (run: string) =>
  Number(
    (await db.query('SELECT count(*) AS n FROM messages WHERE platform_message_id LIKE $1', [`m_${run}_%`]))
      .rows[0].n,
  );

describe('kill -9 during a burst of inbound messages', () => {
  // Guarantee: a crash mid-burst loses no message and records or announces none twice.
  it('stores and announces each of 1,000 messages exactly once', async () => {
    const run = uniquePrefix('r');
    const statuses: number[] = [];
    let posted = 0;
    // The burst keeps arriving while the inbox dies: the kill lands mid-intake, not after it.
    const burst = (async () => {
      for (let first = 0; first < MESSAGES; first += PER_BODY) {
        statuses.push(await post(webhookBody(first, run)));
        posted = first + PER_BODY;
        await new Promise((resolve) => setTimeout(resolve, 5));
      }
    })();
    const inbox = system.child('inbox');
    await eventually(async () => ((await stored(run)) >= MESSAGES * 0.1 ? true : undefined), 60_000);
    await inbox.stop('SIGKILL');
    const atKill = await stored(run);
    const postedAtKill = posted;
    await burst;
    expect(statuses).toHaveLength(MESSAGES / PER_BODY);
    expect(statuses.every((s) => s === 200)).toBe(true);
    await inbox.restart();
    await eventually(async () => ((await stored(run)) === MESSAGES ? true : undefined), 120_000);
    const announced = () =>
      recorder
        .ofType('message.received')
        .filter((e) => dataOf(e).message.platform_message_id?.startsWith(`m_${run}_`));
    await eventually(() => (announced().length >= MESSAGES ? true : undefined), 60_000);
    await new Promise((resolve) => setTimeout(resolve, 1_000));
    const ids = announced().map((e) => dataOf(e).message.platform_message_id);
    expect(new Set(ids).size).toBe(MESSAGES);
    expect(ids).toHaveLength(MESSAGES);
    expect(postedAtKill).toBeLessThan(MESSAGES);
    expect(atKill).toBeLessThan(MESSAGES);
  }, 300_000);
});
