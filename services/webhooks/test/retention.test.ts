import { makeEvent } from '@svc/bus';
import { tablesReadWhole } from '@svc/testing';
import pg from 'pg';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { RETRY_HORIZON_MS } from '../src/delivery/schedule.ts';
import { PURGE_EXPIRED, purgeExpiredEvents } from '../src/retention.ts';
import { startWebhooksStack, type WebhooksStack } from './harness.ts';

const DAY = 86_400_000;
let stack: WebhooksStack;

beforeAll(async () => {
  stack = await startWebhooksStack({ EVENT_RETENTION_DAYS: '30' });
});
afterAll(() => stack.stop());

async function insertEvent(storedAt: Date, delivery?: 'pending' | 'delivered'): Promise<string> {
  const event = makeEvent('post.published', { partner: 'retention', workspace: null, external_id: null }, {});
  await stack.db.query(
    'INSERT INTO events (id, type, partner_slug, created_at, body, stored_at) VALUES ($1, $2, $3, $4, $5, $4)',
    [event.id, event.type, event.partner, storedAt, JSON.stringify(event)],
  );
  if (delivery) {
    await stack.db.query(
      `INSERT INTO deliveries (event_id, partner_id, state, attempt_count, max_attempts, next_attempt_at, created_at, updated_at)
       VALUES ($1, 'ptn_x', $2, 1, 6, $3, $4, $4)`,
      [event.id, delivery, delivery === 'pending' ? storedAt : null, storedAt],
    );
    await stack.db.query(
      `INSERT INTO delivery_attempts (id, event_id, number, url, attempted_at, status_code, latency_ms, succeeded)
       VALUES ($1, $2, 1, 'https://x.test/', $3, 500, 5, false)`,
      [`dlv_${event.id.slice(4)}`, event.id, storedAt],
    );
  }
  return event.id;
}

describe('retention', () => {
  // Guarantee: a batch of expired events is found by index and deleted by primary key, so purging
  // a day of events costs the events purged, not a scan of every event per batch of 1,000.
  it('reads no whole table to purge a batch, with many events stored', async () => {
    const client = await stack.db.connect();
    try {
      await client.query('BEGIN');
      await client.query(
        `INSERT INTO events (id, type, partner_slug, created_at, body, stored_at)
         SELECT 'evt_many_' || g, 'post.published', 'retention', now(), '{}', now() - g * interval '1 minute'
           FROM generate_series(1, 50000) g`,
      );
      await client.query('ANALYZE events');
      const cutoff = new Date(Date.now() - 20 * DAY);
      expect(await tablesReadWhole(client, PURGE_EXPIRED, [cutoff, 1_000])).toEqual([]);
    } finally {
      await client.query('ROLLBACK');
      client.release();
    }
  });

  // Guarantee: events are kept for the retry horizon plus the catch-up window, never purged while a
  // delivery is pending, purged with their attempts after that; several replicas purging at once
  // each delete a disjoint part and fail on nothing.
  it('purges expired events once, safely from several replicas', async () => {
    const now = new Date('2031-06-01T00:00:00Z');
    const cutoff = now.getTime() - RETRY_HORIZON_MS - 30 * DAY;
    const expired: string[] = [];
    for (let i = 0; i < 250; i++) expired.push(await insertEvent(new Date(cutoff - 1_000 - i), 'delivered'));
    for (let i = 0; i < 250; i++) expired.push(await insertEvent(new Date(cutoff - 5 * DAY)));
    const kept = [
      await insertEvent(new Date(cutoff + 1_000)), // inside the window
      await insertEvent(new Date(cutoff - 10 * DAY), 'pending'), // still being delivered
      await insertEvent(new Date(now.getTime() - 1_000), 'delivered'),
    ];

    const replicas = [0, 1, 2].map(
      () => new pg.Pool({ connectionString: stack.databaseUrl, max: 1, options: '-c search_path=webhooks' }),
    );
    try {
      const purged = await Promise.all(replicas.map((pool) => purgeExpiredEvents(pool, now, 30, 50)));
      expect(purged.reduce((a, b) => a + b, 0)).toBe(expired.length);
    } finally {
      await Promise.all(replicas.map((pool) => pool.end()));
    }
    const { rows } = await stack.db.query('SELECT id FROM events ORDER BY id');
    expect(rows.map((r) => r.id).sort()).toEqual([...kept].sort());
    const orphans = await stack.db.query(
      'SELECT count(*)::int AS n FROM delivery_attempts WHERE NOT (event_id = ANY($1))',
      [kept],
    );
    expect(orphans.rows[0].n).toBe(0);
    expect(await purgeExpiredEvents(stack.db, now, 30)).toBe(0);
  });
});
