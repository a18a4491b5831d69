import { createPool } from '@svc/db';
import { createLogger } from '@svc/logging';
import { createTestDatabase, removePrefixedState, tablesReadWhole, uniquePrefix } from '@svc/testing';
import type pg from 'pg';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import {
  type Bus,
  connectBus,
  eventRow,
  jobRow,
  makeEvent,
  OutboxRelay,
  SUBJECTS,
  writeOutbox,
} from '../src/index.ts';
import { claimStatement } from '../src/outbox-relay.ts';

// The outbox relay against real Postgres and NATS (JetStream), on the publishing schema's outbox
// table: what a service commits is published, once, and nothing is lost when a publish fails.
const SCHEMA = 'publishing';
const logger = createLogger('test', { level: 'silent' });
let pool: pg.Pool;
let bus: Bus;

beforeAll(async () => {
  pool = createPool(await createTestDatabase(), SCHEMA);
  bus = await connectBus({
    url: process.env.NATS_URL ?? 'nats://127.0.0.1:4222',
    prefix: uniquePrefix('outbox'),
    name: 'outbox-test',
    logger,
  });
});
afterAll(async () => {
  await bus.close();
  await removePrefixedState(bus.subjects.prefix);
  await pool.end();
});

async function commitEvents(count: number) {
  const events = Array.from({ length: count }, (_, i) =>
    makeEvent('post.published', { partner: 'acme', workspace: 'wsp_1', external_id: null }, { i }),
  );
  const client = await pool.connect();
  try {
    await writeOutbox(client, events.map(eventRow));
  } finally {
    client.release();
  }
  return events;
}

/** Rows still in the outbox: a row is deleted once it is out. */
const unpublished = async (ids: string[]) =>
  (await pool.query('SELECT id FROM outbox WHERE id = ANY($1)', [ids])).rowCount;

async function streamedIds(): Promise<string[]> {
  const consumer = await bus.js.consumers.get(bus.subjects.streamName('events'));
  const ids: string[] = [];
  for (;;) {
    const message = await consumer.next({ expires: 1_000 });
    if (!message) return ids;
    ids.push(message.headers?.get('Nats-Msg-Id') ?? '');
  }
}

describe('the service pool', () => {
  // Guarantee: named statements (the relay's claim and delete among them) keep one plan per
  // connection instead of being planned again on each call as their arrays' lengths vary.
  it('plans named statements once per connection', async () => {
    const { rows } = await pool.query<{ plan_cache_mode: string }>('SHOW plan_cache_mode');
    expect(rows[0]?.plan_cache_mode).toBe('force_generic_plan');
  });
});

describe("the relay's claim", () => {
  // Guarantee: a batch is claimed and deleted by primary key however many rows wait, so draining a
  // backlog (after a NATS outage) costs its size, not its size squared. The plan checked is the one
  // the relay's connections keep (generic: the batch size unknown when planned).
  it('reads no whole outbox, with thousands of rows waiting', async () => {
    const client = await pool.connect();
    try {
      await client.query('BEGIN');
      await client.query(
        `INSERT INTO outbox (id, subject, payload)
         SELECT 'evt_backlog_' || g, 'post.published', '{}' FROM generate_series(1, 5000) g`,
      );
      await client.query('ANALYZE outbox');
      await client.query(`PREPARE backlog_claim(int, numeric) AS ${claimStatement(SCHEMA).text}`);
      expect(await tablesReadWhole(client, 'EXECUTE backlog_claim(100, 0)')).toEqual([]);
    } finally {
      await client.query('ROLLBACK');
      await client.query('DEALLOCATE backlog_claim').catch(() => {}); // not prepared if the test failed first
      client.release();
    }
  });
});

describe('outbox rows', () => {
  // Guarantee: a job's row id is its job key, the same for every write of that attempt, so
  // JetStream drops a second publish of it (ids already in flight keep this exact form).
  it('keys a publish job by post, account and attempt', () => {
    const row = jobRow(SUBJECTS.publishJob, { post_id: 'post_1', account_id: 'acc_1', attempt: 2 });
    expect(row).toMatchObject({ id: 'job_post_1_acc_1_2', subject: 'jobs.publish' });
  });
});

describe('OutboxRelay', () => {
  // Guarantee: committed rows reach JetStream in batches, each once (Nats-Msg-Id = row id), and
  // leave the outbox; a second pass finds nothing to send.
  it('publishes committed rows once and deletes them', async () => {
    const relay = new OutboxRelay(pool, bus, logger, { schema: SCHEMA, batchSize: 4 });
    const events = await commitEvents(10);
    const ids = events.map((e) => e.id);
    let sent = 0;
    for (let batch = await relay.relayBatch(); batch > 0; batch = await relay.relayBatch()) sent += batch;
    expect(sent).toBe(10);
    expect(await unpublished(ids)).toBe(0);
    expect((await streamedIds()).sort()).toEqual([...ids].sort());
  });

  // Guarantee: when NATS refuses a publish, the batch rolls back: its rows stay unpublished and go
  // out on a later pass (nothing lost, nothing deleted that was not sent).
  it('keeps rows whose publish failed for the next pass', async () => {
    const events = await commitEvents(3);
    const ids = events.map((e) => e.id);
    const refusing = { ...bus, js: { publish: () => Promise.reject(new Error('NATS unavailable')) } };
    const failing = new OutboxRelay(pool, refusing as unknown as Bus, logger, { schema: SCHEMA });
    await expect(failing.relayBatch()).rejects.toThrow('NATS unavailable');
    expect(await unpublished(ids)).toBe(3);
    const relay = new OutboxRelay(pool, bus, logger, { schema: SCHEMA });
    expect(await relay.relayBatch()).toBe(3);
    expect(await unpublished(ids)).toBe(0);
  });

  // Guarantee: rows a service just committed go out at once and are deleted; if NATS refuses, the
  // call does not fail the caller and the rows stay for the relay's next pass.
  it('publishes just-committed rows at once, leaving failures to the relay', async () => {
    const relay = new OutboxRelay(pool, bus, logger, { schema: SCHEMA });
    const sent = (await commitEvents(2)).map((e) => eventRow(e));
    await relay.publishCommitted(sent);
    expect(await unpublished(sent.map((r) => r.id))).toBe(0);

    const kept = (await commitEvents(2)).map((e) => eventRow(e));
    const refusing = { ...bus, js: { publish: () => Promise.reject(new Error('NATS unavailable')) } };
    const failing = new OutboxRelay(pool, refusing as unknown as Bus, logger, { schema: SCHEMA });
    await failing.publishCommitted(kept);
    await failing.stop();
    expect(await unpublished(kept.map((r) => r.id))).toBe(2);
    expect(await relay.relayBatch()).toBe(2);
  });

  // Guarantee: the periodic pass leaves rows just committed to the service publishing them itself
  // (no second send, no wait on its delete); rows past that age, or a kicked pass, take them.
  it('leaves the youngest rows to the committer unless kicked', async () => {
    const relay = new OutboxRelay(pool, bus, logger, { schema: SCHEMA });
    const ids = (await commitEvents(2)).map((e) => e.id);
    expect(await relay.relayBatch(60_000)).toBe(0);
    expect(await unpublished(ids)).toBe(2);
    expect(await relay.relayBatch(0)).toBe(2);
    expect(await unpublished(ids)).toBe(0);
    // A row stamped ahead of the clock (created_at is rounded to the millisecond) is still taken
    // by a kicked pass.
    const [ahead] = (await commitEvents(1)).map((e) => e.id);
    await pool.query(`UPDATE outbox SET created_at = now() + interval '500 milliseconds' WHERE id = $1`, [
      ahead,
    ]);
    expect(await relay.relayBatch(0)).toBe(1);
  });

  // Guarantee: rows of commits published at the same time are all deleted, by one DELETE rather
  // than one per commit (the statement count the batching exists for).
  it('deletes the rows of concurrent commits together', async () => {
    const deletes: unknown[] = [];
    const counting = Object.create(pool) as pg.Pool;
    counting.query = ((config: { name?: string }, ...rest: unknown[]) => {
      if (config.name?.startsWith('outbox_delete_')) deletes.push(config);
      return (pool.query as (...args: unknown[]) => unknown)(config, ...rest);
    }) as pg.Pool['query'];
    const relay = new OutboxRelay(counting, bus, logger, { schema: SCHEMA });
    const commits = await Promise.all(
      Array.from({ length: 5 }, async () => (await commitEvents(2)).map((e) => eventRow(e))),
    );
    await Promise.all(commits.map((rows) => relay.publishCommitted(rows)));
    expect(await unpublished(commits.flat().map((r) => r.id))).toBe(0);
    // Fewer deletes than commits (one, unless the publishes' answers came more than 50 ms apart).
    expect(deletes.length).toBeLessThan(commits.length);
    await relay.stop();
  });
});
