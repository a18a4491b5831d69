// `pnpm bench:inbox`: inbound messages through the real path. Signed Meta webhook POSTs (batched
// entries, as Meta sends them) go to the gateway, onto the PROVIDER stream, into the inbox service
// (its own process), which stores each message and writes `message.received` to its outbox; the
// webhooks service (its own process) delivers each to a local partner receiver (its own process).
// Measured in the same run:
//   (a) messages stored and delivered to the receiver per second, at full speed;
//   (a1) the same with one message per body (as Meta sends them at ordinary load), at full speed;
//   (b) this machine's Postgres ceiling, one transaction of two single-row inserts;
//   (c) at a steady 200 single-message bodies/s, the time from the Meta POST to the partner's
//       receipt, and of it the time from the POST to the message's commit in the inbox.
// Checks every message arrived exactly once.
//
// The services run as their production bundles, each in its own process.
// Environment: BENCH_MESSAGES (5000), BENCH_PER_BODY (50), BENCH_PARTNERS (10: each its webhook and Page),
// BENCH_CONTACTS (10 people per Page), BENCH_SINGLE_MESSAGES (3000, one per body, 32 POSTs in flight),
// BENCH_STEADY_RATE (200), BENCH_STEADY_S (10), BENCH_CPU_PROF (a folder: CPU profiles of each process).

import { randomBytes } from 'node:crypto';
import path from 'node:path';
import { metaJson, signatureHeaders } from '@svc/graph-sandbox';
import { api, connectThroughLink, createUser } from '@svc/testing';
import { buildBundles, type System, startSystem } from '@svc/testing/system';
import pg from 'pg';
import { Agent, request } from 'undici';
import { type Child, cleanUpOnInterrupt, envVar, startChild } from './child.ts';
import { type BenchDatabase, createBenchDatabase } from './database.ts';
import { postgresCeiling } from './postgres-ceiling.ts';

const MESSAGES = Number(envVar('BENCH_MESSAGES', '5000'));
const PER_BODY = Number(envVar('BENCH_PER_BODY', '50'));
const CONTACTS = Number(envVar('BENCH_CONTACTS', '10'));
const STEADY_RATE = Number(envVar('BENCH_STEADY_RATE', '200'));
const STEADY_S = Number(envVar('BENCH_STEADY_S', '10'));
const SINGLE_MESSAGES = Number(envVar('BENCH_SINGLE_MESSAGES', '3000'));
const POSTS_IN_FLIGHT = 4;
/** Single-message bodies are small: more POSTs in flight keep the gateway busy, as Meta would. */
const SINGLE_POSTS_IN_FLIGHT = 32;
const PROFILE_DIR = envVar('BENCH_CPU_PROF', '');
/** Messages are spread over this many partners, each with its own webhook endpoint (and cap). */
const PARTNERS = Number(envVar('BENCH_PARTNERS', '10'));
/** The sandbox's development app secret: it signs what Meta would send. */
const APP_SECRET = 'sandbox-app-secret-0123456789abcdef';

const run = randomBytes(4).toString('hex');
const say = (line: string) => process.stderr.write(`${line}\n`);
const sleep = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms));
let database: BenchDatabase | undefined;
let system: System | undefined;
let receiver: Child | undefined;
const agent = new Agent({ keepAliveTimeout: 30_000 });

/** One partner's connected Page and the people who wrote to it. */
interface Page {
  pageId: string;
  contacts: string[];
}

interface Target {
  gatewayUrl: string;
  pages: Page[];
}

/** The system as child processes, and PARTNERS partners, each with its webhook and a connected Page. */
async function startTarget(): Promise<Target> {
  database = await createBenchDatabase(`bench_inbox_${run}`, say);
  receiver = await startChild('receiver', 'webhook-receiver.ts', {});
  say('▶ building the services (turbo run build) …');
  buildBundles();
  say('▶ starting identity, accounts, webhooks, inbox and the gateway, each in its own process …');
  system = await startSystem({
    services: ['identity', 'accounts', 'webhooks', 'inbox', 'gateway'],
    run: 'bundle',
    databaseUrl: database.url,
    prefix: `benchinbox${run}`,
    env: { LOG_LEVEL: 'warn', UNAUTHENTICATED_LIMIT_PER_MINUTE: '1000000' },
    logs: 'stderr',
    nodeFlags: (label) =>
      PROFILE_DIR ? ['--cpu-prof', `--cpu-prof-dir=${path.join(PROFILE_DIR, label)}`] : [],
  });
  say(`▶ ${PARTNERS} partners connect a Page each; ${CONTACTS} people write to each Page first …`);
  const pages: Page[] = [];
  for (let i = 0; i < PARTNERS; i++) pages.push(await partnerPage(system, i));
  return { gatewayUrl: system.gatewayUrl, pages };
}

/** A partner whose webhook is the receiver (a path of its own), a connected Page, its contacts. */
async function partnerPage(system: System, index: number): Promise<Page> {
  const { key } = await system.createPartner(undefined, { limitPerMinute: 1_000_000 });
  const call = api(system.gatewayUrl, key);
  await call('PUT', '/v1/webhook', { url: `${receiver?.ready.url}${receiver?.ready.path}/${index}` });
  const workspace = (await call('POST', '/v1/workspaces', { name: `bench ${index}` })).body.id as string;
  const stack = { sandbox: { url: system.addresses.sandboxUrl }, sandboxControl: system.sandboxControl };
  const user = await createUser(stack, [{ name: `Bench Page ${index}` }]);
  const link = (await call('POST', `/v1/workspaces/${workspace}/connect-links`, {})).body;
  await connectThroughLink(stack, link.url, 'page_network', { userId: user.user.id, decision: 'approve' });
  const pageId = user.pages[0]?.id as string;
  const contacts: string[] = [];
  for (let i = 0; i < CONTACTS; i++) {
    const sent = await system.sandboxControl<{ sender_id: string }>(
      'POST',
      `/__sandbox/pages/${pageId}/messages`,
      {
        from: { name: `Person ${index}.${i}` },
        text: 'hello',
      },
    );
    contacts.push(sent.sender_id);
  }
  return { pageId, contacts };
}

/** One Meta webhook body: `count` messages from the contacts, in one entry, signed. */
function webhook(page: Page, prefix: string, first: number, count: number) {
  const now = Date.now();
  const messaging = Array.from({ length: count }, (_, i) => ({
    sender: { id: page.contacts[(first + i) % page.contacts.length] },
    recipient: { id: page.pageId },
    timestamp: now,
    message: { mid: `${prefix}${first + i}`, text: `bench message ${first + i}` },
  }));
  const body = metaJson({ object: 'page', entry: [{ id: page.pageId, time: now, messaging }] });
  return { body, headers: { 'content-type': 'application/json', ...signatureHeaders(APP_SECRET, body) } };
}

/** Posts a body about the Page the message numbers fall to (bodies and partners take turns). */
async function postWebhook(target: Target, prefix: string, first: number, count: number): Promise<void> {
  const page = target.pages[Math.floor(first / count) % target.pages.length] as Page;
  const { body, headers } = webhook(page, prefix, first, count);
  const response = await request(`${target.gatewayUrl}/webhooks/meta`, {
    method: 'POST',
    dispatcher: agent,
    body,
    headers,
  });
  await response.body.dump();
  if (response.statusCode !== 200) throw new Error(`/webhooks/meta answered ${response.statusCode}`);
}

/** Network message id → [first receipt ms, receipts], as the receiver saw them. */
async function received(): Promise<Map<string, [number, number]>> {
  const url = `${receiver?.ready.url}/__messages`;
  return new Map(Object.entries((await (await fetch(url)).json()) as Record<string, [number, number]>));
}

async function waitForMessages(prefix: string, expected: number, timeoutMs: number) {
  const deadline = Date.now() + timeoutMs;
  for (;;) {
    const seen = [...(await received())].filter(([id]) => id.startsWith(prefix));
    if (seen.length >= expected) return seen;
    if (Date.now() > deadline)
      throw new Error(`only ${seen.length} of ${expected} messages reached the partner`);
    await sleep(100);
  }
}

/** (a) and (a1): `total` messages at once, in bodies of `perBody`, `inFlight` POSTs at a time. */
async function fullSpeed(target: Target, phase: string, total: number, perBody: number, inFlight: number) {
  const prefix = `${phase}_${run}_`;
  say(`▶ full speed: ${total} messages in bodies of ${perBody}, ${inFlight} POSTs in flight …`);
  const started = Date.now();
  let next = 0;
  await Promise.all(
    Array.from({ length: inFlight }, async () => {
      while (next < total) {
        const first = next;
        next += perBody;
        await postWebhook(target, prefix, first, Math.min(perBody, total - first));
      }
    }),
  );
  const seen = await waitForMessages(prefix, total, 300_000);
  const last = Math.max(...seen.map(([, [at]]) => at));
  return { rate: total / ((last - started) / 1000), seconds: (last - started) / 1000 };
}

/** (c): one message per POST at a steady rate; POST → partner receipt. */
async function steady(target: Target) {
  const prefix = `s_${run}_`;
  const total = STEADY_RATE * STEADY_S;
  say(`▶ steady load: ${STEADY_RATE} messages/s for ${STEADY_S} s …`);
  const sentAt = new Map<string, number>();
  const started = performance.now();
  const posts: Promise<void>[] = [];
  for (let i = 0; i < total; i++) {
    const wait = started + (i * 1000) / STEADY_RATE - performance.now();
    if (wait > 1) await sleep(wait);
    sentAt.set(`${prefix}${i}`, Date.now());
    posts.push(postWebhook(target, prefix, i, 1));
  }
  await Promise.all(posts);
  const achieved = total / ((performance.now() - started) / 1000);
  const seen = await waitForMessages(prefix, total, 60_000);
  const latencies = sorted(seen.map(([id, [at]]) => at - (sentAt.get(id) ?? Number.NaN)));
  const stored = await storedAfterPost(prefix);
  return {
    achieved,
    p50: quantile(latencies, 0.5),
    p99: quantile(latencies, 0.99),
    max: latencies.at(-1) ?? NaN,
    storedP50: quantile(stored, 0.5),
    storedP99: quantile(stored, 0.99),
  };
}

const sorted = (values: number[]) => values.sort((a, b) => a - b);
const quantile = (values: number[], q: number) =>
  values[Math.min(values.length - 1, Math.floor(q * values.length))] ?? Number.NaN;

/**
 * Where the time goes: from the Meta POST (the message's timestamp, set when the body was built)
 * to its commit in the inbox (`stored_at`); the rest is the outbox, NATS and the webhooks service.
 */
async function storedAfterPost(prefix: string): Promise<number[]> {
  const client = new pg.Client({ connectionString: database?.url ?? '' });
  await client.connect();
  try {
    const { rows } = await client.query<{ ms: number }>(
      `SELECT (extract(epoch FROM stored_at - created_at) * 1000)::float8 AS ms FROM inbox.messages
        WHERE platform_message_id LIKE $1`,
      [`${prefix}%`],
    );
    return sorted(rows.map((r) => r.ms));
  } finally {
    await client.end();
  }
}

/** Every bench message reached the partner exactly once. */
async function exactlyOnce(expected: number) {
  await sleep(1_000);
  const ours = [...(await received())].filter(([id]) => id.includes(`_${run}_`));
  const twice = ours.filter(([, [, times]]) => times > 1).length;
  return { ok: ours.length === expected && twice === 0, distinct: ours.length, twice };
}

async function cleanup(): Promise<void> {
  await agent.close().catch(() => {});
  await receiver?.stop().catch(() => {});
  await system
    ?.stop()
    .catch((error: unknown) => say(`cleanup: stopping the system failed: ${String(error)}`));
  await database
    ?.drop()
    .catch((error: unknown) => say(`cleanup: dropping the database failed: ${String(error)}`));
}

cleanUpOnInterrupt(cleanup);

let exitCode = 0;
try {
  const target = await startTarget();
  await waitForMessages('', CONTACTS * PARTNERS, 60_000);
  const product = await fullSpeed(target, 'm', MESSAGES, PER_BODY, POSTS_IN_FLIGHT);
  const single = await fullSpeed(target, 'o', SINGLE_MESSAGES, 1, SINGLE_POSTS_IN_FLIGHT);
  const latency = await steady(target);
  const once = await exactlyOnce(MESSAGES + SINGLE_MESSAGES + STEADY_RATE * STEADY_S);
  say('▶ ceiling: Postgres, BEGIN + 2 inserts + COMMIT, 20 clients, 5 s …');
  const ceiling = await postgresCeiling(database?.url ?? '');
  const share = product.rate / ceiling;
  const singleShare = single.rate / ceiling;
  const lines = [
    '',
    `product (Meta POST → gateway → NATS → inbox → outbox → webhooks → partner): ${product.rate.toFixed(0)} messages/s  (${MESSAGES} in ${product.seconds.toFixed(1)} s, ${PER_BODY} per webhook body, ${PARTNERS} partners)`,
    `ceiling Postgres 2-insert tx:  ${ceiling.toFixed(0)} tx/s  (20 clients)`,
    `product / Postgres ceiling:    ${(share * 100).toFixed(1)}%  (target ≥ 20%: ${share >= 0.2 ? 'MET' : 'NOT MET'})`,
    `single-message bodies, full speed: ${single.rate.toFixed(0)} messages/s  (${SINGLE_MESSAGES} in ${single.seconds.toFixed(1)} s, ${SINGLE_POSTS_IN_FLIGHT} POSTs in flight) = ${(singleShare * 100).toFixed(1)}% of the Postgres ceiling`,
    `Meta POST → partner receipt at ${latency.achieved.toFixed(0)} single-message bodies/s: p50 ${latency.p50.toFixed(0)} ms, p99 ${latency.p99.toFixed(0)} ms, max ${latency.max.toFixed(0)} ms  (target p99 < 300 ms: ${latency.p99 < 300 ? 'MET' : 'NOT MET'})`,
    `  of it, Meta POST → committed in the inbox: p50 ${latency.storedP50.toFixed(0)} ms, p99 ${latency.storedP99.toFixed(0)} ms`,
    `every message delivered exactly once: ${once.ok ? 'yes' : 'NO'}  (${once.distinct} distinct, ${once.twice} more than once)`,
    '',
    'Processes: identity, accounts, webhooks, inbox, gateway, receiver, NATS and Postgres each on their own; this runner posts the webhooks and hosts the graph-sandbox.',
  ];
  process.stdout.write(`${lines.join('\n')}\n`);
  if (!once.ok) exitCode = 1;
} catch (error) {
  say(`bench failed: ${error instanceof Error ? (error.stack ?? error.message) : String(error)}`);
  exitCode = 1;
} finally {
  await cleanup();
}
process.exit(exitCode);
