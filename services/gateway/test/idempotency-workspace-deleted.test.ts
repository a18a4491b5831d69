import { api, eventually } from '@svc/testing';
import { type Stack, startStack } from '@svc/testing/stack';
import { Redis } from 'ioredis';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';

/**
 * The Idempotency-Key answers the gateway keeps in Redis (24 hours) for a workspace that is then
 * deleted: they may hold its data (a minted key, a connect link, a message sent), so
 * `workspace.deleted` drops them, and a retry after the deletion is not answered from them.
 */
let stack: Stack;
let redis: Redis;
let call: ReturnType<typeof api>;

beforeAll(async () => {
  stack = await startStack({ UNAUTHENTICATED_LIMIT_PER_MINUTE: '100000' });
  redis = new Redis('redis://127.0.0.1:6379');
  call = api(stack.gateway.url, (await stack.createPartner()).key);
});
afterAll(async () => {
  redis.disconnect();
  await stack.stop();
});

let keys = 0;
const newKey = () => `deleted-${Date.now()}-${++keys}`;

/** The records of the gateway's Redis, as keys. */
const records = async () => new Set(await redis.keys(`${stack.prefix}:idem:*`));

/** The records one request added. */
async function recorded(request: () => Promise<{ status: number }>): Promise<string[]> {
  const before = await records();
  const answer = await request();
  expect(answer.status).toBeLessThan(300);
  return [...(await records())].filter((record) => !before.has(record));
}

describe('Idempotency-Key answers of a deleted workspace', () => {
  // Guarantee: deleting a workspace drops every recorded answer about it (the workspace's own
  // creation, a key minted by path, a connect link made with its workspace key) and nothing of
  // another workspace; a retry with the same key afterwards is not answered from a record.
  it('drops them when the workspace is deleted', async () => {
    const createKey = newKey();
    const create = () =>
      call('POST', '/v1/workspaces', { name: 'Going away' }, { 'idempotency-key': createKey });
    const [created] = await recorded(create);
    const workspace = (await create()).body.id as string;
    const mintKey = newKey();
    const mint = () =>
      call('POST', `/v1/workspaces/${workspace}/keys`, { label: 'ops' }, { 'idempotency-key': mintKey });
    const [minted] = await recorded(mint);
    const workspaceKey = (await mint()).body.key as string;
    const own = api(stack.gateway.url, workspaceKey);
    const [linked] = await recorded(() =>
      own('POST', `/v1/workspaces/${workspace}/connect-links`, {}, { 'idempotency-key': newKey() }),
    );
    const other = (await call('POST', '/v1/workspaces', { name: 'Staying' })).body.id as string;
    const [kept] = await recorded(() =>
      call('POST', `/v1/workspaces/${other}/keys`, { label: 'ops' }, { 'idempotency-key': newKey() }),
    );
    const ofWorkspace = [created, minted, linked] as string[];
    expect(ofWorkspace.every(Boolean)).toBe(true);
    expect(await redis.exists(...ofWorkspace)).toBe(3);

    expect((await call('DELETE', `/v1/workspaces/${workspace}`)).status).toBe(204);
    await eventually(async () => ((await redis.exists(...ofWorkspace)) === 0 ? true : undefined));
    expect(await redis.exists(kept as string)).toBe(1);

    const retried = await mint();
    expect(retried.status).toBe(404);
    expect(retried.headers.get('idempotent-replayed')).toBeNull();
  });
});
