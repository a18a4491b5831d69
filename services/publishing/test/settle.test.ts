import { type Bus, connectBus, OutboxRelay } from '@svc/bus';
import { createClient, IdentityService, type ServiceClient } from '@svc/contracts';
import { createPool } from '@svc/db';
import { WorkspaceDirectory } from '@svc/directory';
import { newId } from '@svc/ids';
import { createLogger } from '@svc/logging';
import { eventually, uniquePrefix } from '@svc/testing';
import { type InProcess, type System, startSystem } from '@svc/testing/system';
import type pg from 'pg';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { openDatabase, SCHEMA } from '../src/db.ts';
import type { TargetOutcome } from '../src/posts/post-rows.ts';
import { PostStore } from '../src/posts/post-store.ts';
import { Settlement } from '../src/publish/settlement.ts';

/**
 * Settlement against real Postgres: each target's outcome is recorded and its post counted down in
 * one statement, and the settlement that reaches 0 settles the post. These tests pin what that
 * must keep: of several targets settling at the same moment exactly one settles the post (one
 * `post.*` event), a redelivered settlement counts nothing, and a post whose last settlement died
 * after counting down is settled by the next one to look. Identity runs in this process (the
 * event's scope comes from it, as in production); no network is involved.
 */
const logger = createLogger('test', { level: 'silent' });
let system: System;
let identity: InProcess['identity'];
let identityClient: ServiceClient<typeof IdentityService>;
let settlement: Settlement;
let pool: pg.Pool;
let bus: Bus;
let workspaceId: string;
let partnerId: string;
let close: () => Promise<void>;

beforeAll(async () => {
  system = await startSystem({
    services: ['identity'],
    prefix: uniquePrefix('settle'),
    env: { LOG_LEVEL: 'silent' },
  });
  const { databaseUrl, prefix } = system;
  identity = system.service('identity');
  identityClient = createClient(IdentityService, `127.0.0.1:${identity.port}`);
  ({ partnerId } = await system.createPartner());
  const { workspace } = await identityClient.createWorkspace({
    partnerId,
    name: 'Bakery',
    timezone: 'Europe/Paris',
    settingsJson: '{}',
  });
  workspaceId = workspace?.id ?? '';
  // Enough connections for every concurrent settlement to run at the same moment.
  pool = createPool(databaseUrl, SCHEMA, 20);
  bus = await connectBus({
    url: process.env.NATS_URL ?? 'nats://127.0.0.1:4222',
    prefix,
    name: 'settle-test',
    logger,
  });
  const workspaces = new WorkspaceDirectory(bus, identityClient);
  const relay = new OutboxRelay(pool, bus, logger, { schema: SCHEMA });
  const { prisma } = openDatabase(databaseUrl);
  const store = new PostStore(pool, prisma, relay);
  settlement = new Settlement(store, workspaces, logger, () => new Date());
  close = async () => {
    workspaces.close();
    await bus.close();
    await prisma.$disconnect();
    await pool.end();
  };
});

afterAll(async () => {
  await close?.();
  identityClient?.close();
  await system?.stop();
});

/** A post publishing to `count` targets, none settled yet, as CREATE_POST writes it. */
async function publishingPost(count: number): Promise<{ postId: string; accounts: string[] }> {
  const postId = newId('post');
  const accounts = Array.from({ length: count }, () => newId('account'));
  await pool.query(
    `INSERT INTO posts (id, partner_id, workspace_id, caption, media_ids, status, attempts, unsettled,
                        created_by, updated_at)
     VALUES ($1, $2, $3, 'Fresh bread', '{}', 'publishing', 1, $4, 'test', now())`,
    [postId, partnerId, workspaceId, count],
  );
  await pool.query(
    `INSERT INTO post_targets (post_id, account_id, position, network, username, status, updated_at)
     SELECT $1, a, p - 1, 'page_network', 'bakery', 'publishing', now()
       FROM unnest($2::text[]) WITH ORDINALITY AS t(a, p)`,
    [postId, accounts],
  );
  return { postId, accounts };
}

const published = (n: number): TargetOutcome => ({
  status: 'published',
  platformPostId: `page_${n}`,
  permalink: `https://facebook.test/${n}`,
  publishedAt: new Date(),
});

async function postRow(postId: string) {
  const { rows } = await pool.query<{ status: string; unsettled: number; last_error: string | null }>(
    'SELECT status, unsettled, last_error FROM posts WHERE id = $1',
    [postId],
  );
  return rows[0];
}

/**
 * The `post.*` events of a post that reached the bus. A settlement publishes its event right after
 * its commit and deletes the outbox row a moment later, so the outbox alone is no record of what
 * was written: once no row of the post is left to publish, every event written is on the stream.
 */
async function postEvents(postId: string): Promise<string[]> {
  await eventually(async () => {
    const { rowCount } = await pool.query(`SELECT 1 FROM outbox WHERE payload->'data'->'post'->>'id' = $1`, [
      postId,
    ]);
    return rowCount === 0 ? true : undefined;
  });
  const stream = bus.subjects.streamName('events');
  const { state } = await bus.jsm.streams.info(stream);
  const consumer = await bus.js.consumers.get(stream);
  const types: string[] = [];
  for (let seq = 0; seq < state.last_seq; ) {
    const message = await consumer.next({ expires: 5_000 });
    if (!message) throw new Error(`the events stream stopped at ${seq} of ${state.last_seq}`);
    seq = message.seq;
    const event = message.json<{ type: string; data: { post?: { id?: string } } }>();
    if (event.data.post?.id === postId) types.push(event.type);
  }
  return types;
}

describe('settling targets', () => {
  // Guarantee: targets settling at the same moment settle their post exactly once — the status
  // derived from all of them, one post.* event — however their statements interleave.
  it('settles a post once when all its targets settle at the same moment', async () => {
    for (let round = 0; round < 15; round++) {
      const { postId, accounts } = await publishingPost(5);
      await Promise.all(
        accounts.map((accountId, i) =>
          settlement.settleTarget(
            { postId, accountId },
            i === 0 ? { status: 'failed', error: 'refused' } : published(i),
          ),
        ),
      );
      expect(await postRow(postId)).toMatchObject({
        status: 'partial',
        unsettled: 0,
        last_error: 'page_network: refused',
      });
      expect(await postEvents(postId)).toEqual(['post.partial']);
    }
  });

  // Guarantee: a settlement delivered twice (a redelivered job) counts the post down once, so the
  // post is not settled while another target is still publishing.
  it('counts a target settled twice only once', async () => {
    const { postId, accounts } = await publishingPost(2);
    const [first = '', second = ''] = accounts;
    await settlement.settleTarget({ postId, accountId: first }, published(1));
    await settlement.settleTarget({ postId, accountId: first }, { status: 'failed', error: 'again' });
    expect(await postRow(postId)).toMatchObject({ status: 'publishing', unsettled: 1 });
    const { rows } = await pool.query('SELECT status, error FROM post_targets WHERE account_id = $1', [
      first,
    ]);
    expect(rows[0]).toEqual({ status: 'published', error: null });

    await settlement.settleTarget({ postId, accountId: second }, published(2));
    expect(await postRow(postId)).toMatchObject({ status: 'published', unsettled: 0 });
    expect(await postEvents(postId)).toEqual(['post.published']);
  });

  // Guarantee: when the worker that counted a post down to 0 dies before settling it, the next
  // look (a redelivered job of that target) settles it; looking again writes nothing more.
  it('settles a post left at 0 by a worker that died, and only once', async () => {
    const { postId, accounts } = await publishingPost(2);
    await pool.query(
      `UPDATE post_targets SET status = 'failed', error = 'refused' WHERE post_id = $1 AND account_id = $2`,
      [postId, accounts[0]],
    );
    await pool.query(
      `UPDATE post_targets SET status = 'published', published_at = now() WHERE post_id = $1 AND account_id = $2`,
      [postId, accounts[1]],
    );
    await pool.query('UPDATE posts SET unsettled = 0 WHERE id = $1', [postId]);

    await Promise.all([settlement.settlePost(postId), settlement.settlePost(postId)]);
    await settlement.settlePost(postId);
    expect(await postRow(postId)).toMatchObject({ status: 'partial' });
    expect(await postEvents(postId)).toEqual(['post.partial']);
  });
});
