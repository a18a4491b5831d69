// `pnpm bench:webhooks`: event delivery through the real path — rows written to an outbox table,
// relayed to NATS JetStream by the OutboxRelay, stored and delivered by the webhooks service (its own
// process) to a local receiver (its own process) that answers 200 — against two ceilings measured
// in the same run:
//   (a) the raw sender: undici signing and POSTing the same bodies to the same receiver, 50 in flight;
//   (b) Postgres: one transaction of two single-row inserts, 20 clients.
// Then the latency from an event's commit (its outbox row) to its first delivery attempt, at a steady
// 500 events/s. Prints deliveries/s, both ceilings, the ratios against the targets of issue 27, and
// checks every attempt was recorded.
//
// Environment: BENCH_EVENTS (default 20000), BENCH_STEADY_RATE (500), BENCH_STEADY_S (10),
// BENCH_PARTNERS (10: events are spread over this many partners, each with its webhook).

import { createHmac, randomBytes } from 'node:crypto';
import { connectBus, makeEvent, OutboxRelay } from '@svc/bus';
import { createClient, WebhooksService } from '@svc/contracts';
import type { EventEnvelope } from '@svc/contracts/public';
import { newId } from '@svc/ids';
import { createLogger } from '@svc/logging';
import { type System, startSystem } from '@svc/testing/system';
import pg from 'pg';
import { Agent, request } from 'undici';
import { type Child, cleanUpOnInterrupt, envVar, startChild } from './child.ts';
import { type BenchDatabase, createBenchDatabase } from './database.ts';
import { postgresCeiling } from './postgres-ceiling.ts';

const EVENTS = Number(envVar('BENCH_EVENTS', '20000'));
const STEADY_RATE = Number(envVar('BENCH_STEADY_RATE', '500'));
const STEADY_S = Number(envVar('BENCH_STEADY_S', '10'));
const PARTNERS = Number(envVar('BENCH_PARTNERS', '10'));
const SENDER_IN_FLIGHT = 50;
const PG_CLIENTS = 20;
const PG_SECONDS = 5;
const NATS_URL = envVar('NATS_URL', 'nats://127.0.0.1:4222');

const run = randomBytes(4).toString('hex');
const natsPrefix = `benchwh${run}`;
const logger = createLogger('bench', { level: 'warn', destination: process.stderr });
const children = new Set<Child>();
let database: BenchDatabase | undefined;
let system: System | undefined;

const say = (line: string) => process.stderr.write(`${line}\n`);
const sleep = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms));

async function prepareDatabase(): Promise<pg.Pool> {
  database = await createBenchDatabase(`bench_webhooks_${run}`, say);
  const pool = new pg.Pool({ connectionString: database.url, max: 25 });
  // A bench-only producer schema: the outbox table every service has (see identity's).
  await pool.query(`
    CREATE SCHEMA bench_outbox;
    CREATE TABLE bench_outbox.outbox (
      id text PRIMARY KEY, subject text NOT NULL, payload jsonb NOT NULL, request_id text,
      created_at timestamptz(3) NOT NULL DEFAULT now());
    CREATE INDEX ON bench_outbox.outbox (created_at, id);`);
  return pool;
}

function eventsFor(slugs: string[], count: number): EventEnvelope[] {
  return Array.from({ length: count }, (_, i) =>
    makeEvent(
      'post.published',
      { partner: slugs[i % slugs.length] ?? '', workspace: newId('workspace'), external_id: `cust-${i}` },
      { post: { id: newId('post'), caption: 'Benchmark post', status: 'published', attempts: 1 } },
    ),
  );
}

/** Ceiling (a): sign and POST the same bodies with undici, 50 in flight, nothing else. */
async function rawSenderCeiling(url: string, events: EventEnvelope[], secret: string): Promise<number> {
  const agent = new Agent({ keepAliveTimeout: 30_000 });
  const bodies = events.map((e) => JSON.stringify(e));
  let next = 0;
  const started = performance.now();
  await Promise.all(
    Array.from({ length: SENDER_IN_FLIGHT }, async () => {
      while (next < bodies.length) {
        const index = next++;
        const body = bodies[index] ?? '';
        const event = events[index] as EventEnvelope;
        const timestamp = String(Math.floor(Date.now() / 1000));
        const signature = createHmac('sha256', secret).update(`${timestamp}.${body}`).digest('hex');
        const response = await request(url, {
          method: 'POST',
          dispatcher: agent,
          body,
          headers: {
            'Content-Type': 'application/json',
            'X-Service-Event': event.type,
            'X-Service-Delivery': event.id,
            'X-Service-Timestamp': timestamp,
            'X-Service-Signature': `sha256=${signature}`,
          },
        });
        await response.body.dump();
      }
    }),
  );
  const seconds = (performance.now() - started) / 1000;
  await agent.close();
  return bodies.length / seconds;
}

async function count(pool: pg.Pool, sql: string): Promise<number> {
  return Number((await pool.query(sql)).rows[0].n);
}

/** Where the receiver counts the deliveries it got, and how many it had before the product ran. */
interface Received {
  statsUrl: string;
  before: number;
}

/**
 * Waits until `expected` events had their attempt recorded. The receiver is polled until it got them
 * all, and only then the database: a count over the attempts every 50 ms cost the Postgres the
 * product is measured on more and more CPU as the table grew.
 */
async function waitForAttempts(
  pool: pg.Pool,
  received: Received,
  expected: number,
  timeoutMs: number,
): Promise<void> {
  const deadline = Date.now() + timeoutMs;
  const late = (what: string) => {
    if (Date.now() > deadline) throw new Error(`only ${what} of ${expected} events in time`);
  };
  for (;;) {
    const got = (await receiverStats(received.statsUrl)).distinct - received.before;
    if (got >= expected) break;
    late(`${got} received`);
    await sleep(50);
  }
  for (;;) {
    const done = await count(pool, 'SELECT count(DISTINCT event_id) AS n FROM webhooks.delivery_attempts');
    if (done >= expected) return;
    late(`${done} with an attempt recorded`);
    await sleep(50);
  }
}

/** The real path at full speed: outbox rows in transactions of 100, relayed as they commit. */
async function productThroughput(
  pool: pg.Pool,
  relay: OutboxRelay,
  received: Received,
  events: EventEnvelope[],
) {
  const started = Date.now();
  for (let i = 0; i < events.length; i += 100) {
    const batch = events.slice(i, i + 100);
    await pool.query(
      'INSERT INTO bench_outbox.outbox (id, subject, payload) SELECT * FROM unnest($1::text[], $2::text[], $3::jsonb[])',
      [batch.map((e) => e.id), batch.map((e) => e.type), batch.map((e) => JSON.stringify(e))],
    );
    relay.kick();
  }
  const producedMs = Date.now() - started;
  await waitForAttempts(pool, received, events.length, 300_000);
  const lastAttempt = await pool.query('SELECT max(attempted_at) AS at FROM webhooks.delivery_attempts');
  const seconds = ((lastAttempt.rows[0].at as Date).getTime() - started) / 1000;
  return { rate: events.length / seconds, seconds, producedMs };
}

/** Steady load: one outbox transaction per event at a fixed rate; commit → first attempt latency. */
async function steadyLatency(pool: pg.Pool, relay: OutboxRelay, events: EventEnvelope[]) {
  const committedAt = new Map<string, number>();
  const interval = 1000 / STEADY_RATE;
  const started = performance.now();
  const inserts: Promise<void>[] = [];
  for (let i = 0; i < events.length; i++) {
    const wait = started + i * interval - performance.now();
    if (wait > 1) await sleep(wait);
    const event = events[i] as EventEnvelope;
    inserts.push(
      pool
        .query('INSERT INTO bench_outbox.outbox (id, subject, payload) VALUES ($1, $2, $3)', [
          event.id,
          event.type,
          JSON.stringify(event),
        ])
        .then(() => {
          committedAt.set(event.id, Date.now());
          relay.kick();
        }),
    );
  }
  await Promise.all(inserts);
  const achievedRate = events.length / ((performance.now() - started) / 1000);
  const { rows } = await pool.query<{ event_id: string; first: Date }>(
    'SELECT event_id, min(attempted_at) AS first FROM webhooks.delivery_attempts WHERE event_id = ANY($1) GROUP BY event_id',
    [events.map((e) => e.id)],
  );
  const latencies = rows
    .map((row) => row.first.getTime() - (committedAt.get(row.event_id) ?? Number.NaN))
    .sort((a, b) => a - b);
  const pick = (q: number) =>
    latencies[Math.min(latencies.length - 1, Math.floor(q * latencies.length))] ?? NaN;
  return { achievedRate, p50: pick(0.5), p99: pick(0.99), max: latencies.at(-1) ?? NaN };
}

async function receiverStats(url: string): Promise<{ requests: number; distinct: number }> {
  return (await (await fetch(`${url}/__stats`)).json()) as { requests: number; distinct: number };
}

async function cleanup(): Promise<void> {
  for (const child of children) await child.stop().catch(() => {});
  // Stopping the system also deletes its NATS streams.
  await system
    ?.stop()
    .catch((error: unknown) => say(`cleanup: stopping the webhooks service failed: ${String(error)}`));
  await database
    ?.drop()
    .catch((error: unknown) => say(`cleanup: dropping the database failed: ${String(error)}`));
}

cleanUpOnInterrupt(cleanup);

/** The receiver and the webhooks service, each in its own process; a webhook per partner. */
async function startTargets() {
  const receiver = await startChild('receiver', 'webhook-receiver.ts', {});
  children.add(receiver);
  // The real webhooks service (event store consumer, delivery worker, gRPC), alone in its own process.
  system = await startSystem({
    services: ['webhooks'],
    run: 'source',
    databaseUrl: database?.url,
    prefix: natsPrefix,
    env: { LOG_LEVEL: 'warn', NATS_URL },
    logs: 'stderr',
  });
  const receiverUrl = `${receiver.ready.url}${receiver.ready.path}`;
  const client = createClient(WebhooksService, system.addressOf('webhooks'));
  const partners = await Promise.all(
    Array.from({ length: PARTNERS }, async (_, i) => {
      const slug = `bench-${run}-${i}`;
      const { secret } = await client.putWebhook({
        partnerId: newId('partner'),
        partnerSlug: slug,
        url: `${receiverUrl}/${i}`,
        rotateSecret: false,
      });
      return { slug, secret };
    }),
  );
  client.close();
  return { receiver, receiverUrl, partners, slugs: partners.map((p) => p.slug) };
}

/** The product at full speed, then at a steady rate; waits until every event had its attempt. */
async function measureProduct(pool: pg.Pool, slugs: string[], statsUrl: string) {
  const bus = await connectBus({ url: NATS_URL, prefix: natsPrefix, name: 'bench-relay', logger });
  const relay = new OutboxRelay(pool, bus, logger, { schema: 'bench_outbox' });
  relay.start();
  const before = await receiverStats(statsUrl);
  const received = { statsUrl, before: before.distinct };
  say(`▶ product: ${EVENTS} events, outbox → NATS → webhooks service → receiver …`);
  const throughput = await productThroughput(pool, relay, received, eventsFor(slugs, EVENTS));
  say(`▶ steady load: ${STEADY_RATE} events/s for ${STEADY_S} s …`);
  const steadyEvents = eventsFor(slugs, STEADY_RATE * STEADY_S);
  const steady = await steadyLatency(pool, relay, steadyEvents);
  const total = EVENTS + steadyEvents.length;
  await waitForAttempts(pool, received, total, 60_000);
  await sleep(500);
  await relay.stop();
  await bus.close();
  const after = await receiverStats(statsUrl);
  return { throughput, steady, total, received: after.requests - before.requests };
}

async function recordedCounts(pool: pg.Pool) {
  return {
    attempts: await count(pool, 'SELECT count(*) AS n FROM webhooks.delivery_attempts'),
    delivered: await count(pool, "SELECT count(*) AS n FROM webhooks.deliveries WHERE state = 'delivered'"),
    stored: await count(pool, 'SELECT count(*) AS n FROM webhooks.events'),
  };
}

function report(
  { throughput, steady, total, received }: Awaited<ReturnType<typeof measureProduct>>,
  { attempts, delivered, stored }: Awaited<ReturnType<typeof recordedCounts>>,
  senderRate: number,
  postgresRate: number,
) {
  const toPostgres = throughput.rate / postgresRate;
  const toSender = throughput.rate / senderRate;
  const recorded = attempts === received && stored === total && delivered === total;
  const lines = [
    '',
    `product (outbox → NATS → webhooks → HTTP): ${throughput.rate.toFixed(0)} deliveries/s  (${EVENTS} events in ${throughput.seconds.toFixed(1)} s; outbox written in ${(throughput.producedMs / 1000).toFixed(1)} s; ${PARTNERS} partners)`,
    `ceiling (a) raw undici sender:             ${senderRate.toFixed(0)} POSTs/s  (${SENDER_IN_FLIGHT} in flight)`,
    `ceiling (b) Postgres 2-insert tx:          ${postgresRate.toFixed(0)} tx/s  (${PG_CLIENTS} clients)`,
    '',
    `product / Postgres ceiling: ${(toPostgres * 100).toFixed(1)}%  (target of issue 27 ≥ 65%: ${toPostgres >= 0.65 ? 'MET' : 'NOT MET'})`,
    `product / raw sender:       ${(toSender * 100).toFixed(1)}%`,
    `commit → first attempt at ${steady.achievedRate.toFixed(0)} events/s: p50 ${steady.p50.toFixed(0)} ms, p99 ${steady.p99.toFixed(0)} ms, max ${steady.max.toFixed(0)} ms  (target of issue 27 p99 < 75 ms: ${steady.p99 < 75 ? 'MET' : 'NOT MET'})`,
    `every attempt recorded: ${recorded ? 'yes' : 'NO'}  (receiver got ${received} requests, ${attempts} attempts recorded; ${stored} events stored, ${delivered} delivered, of ${total})`,
    '',
    'Processes: receiver, webhooks service, NATS server, Postgres each on their own; this runner writes the outbox, runs the relay and both ceilings.',
  ];
  return { lines, recorded };
}

let exitCode = 0;
try {
  const pool = await prepareDatabase();
  const { receiver, receiverUrl, partners, slugs } = await startTargets();
  say(`\n▶ ceiling (a): raw undici sender, ${EVENTS} signed POSTs, ${SENDER_IN_FLIGHT} in flight …`);
  const senderRate = await rawSenderCeiling(receiverUrl, eventsFor(slugs, EVENTS), partners[0]?.secret ?? '');
  say(`▶ ceiling (b): Postgres, BEGIN + 2 inserts + COMMIT, ${PG_CLIENTS} clients, ${PG_SECONDS} s …`);
  const postgresRate = await postgresCeiling(database?.url ?? '', {
    clients: PG_CLIENTS,
    seconds: PG_SECONDS,
  });
  const product = await measureProduct(pool, slugs, receiver.ready.url);
  const counts = await recordedCounts(pool);
  await pool.end();
  const { lines, recorded } = report(product, counts, senderRate, postgresRate);
  process.stdout.write(`${lines.join('\n')}\n`);
  if (!recorded) exitCode = 1;
} catch (error) {
  say(`bench failed: ${error instanceof Error ? (error.stack ?? error.message) : String(error)}`);
  exitCode = 1;
} finally {
  await cleanup();
}
process.exit(exitCode);
