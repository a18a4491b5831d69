import { connectBus } from '@svc/bus';
import { createLogger } from '@svc/logging';
import { api } from '@svc/testing';
import { type Stack, startStack } from '@svc/testing/stack';
import pg from 'pg';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';

let stack: Stack;
let call: ReturnType<typeof api>;

beforeAll(async () => {
  stack = await startStack();
  const { key } = await stack.createPartner();
  call = api(stack.gateway.url, key);
});
afterAll(() => stack.stop());

describe('workspaces', () => {
  // Guarantee: a new workspace is 201 with every documented field.
  it('creates a workspace with defaults', async () => {
    const res = await call('POST', '/v1/workspaces', { name: 'Bakery' });
    expect(res.status).toBe(201);
    expect(res.body).toEqual({
      id: expect.stringMatching(/^ws_/),
      external_id: null,
      name: 'Bakery',
      timezone: 'UTC',
      settings: {},
      created: expect.any(String),
      updated: expect.any(String),
    });
  });

  // Guarantee (spec 2.1, external_id "may be null"): null is a workspace without one, every time.
  it('creates a workspace with external_id null', async () => {
    const first = await call('POST', '/v1/workspaces', { name: 'No id', external_id: null });
    expect(first.status).toBe(201);
    expect(first.body.external_id).toBeNull();
    const second = await call('POST', '/v1/workspaces', { name: 'No id', external_id: null });
    expect(second.status).toBe(201);
    expect(second.body.id).not.toBe(first.body.id);
  });

  // Guarantee: an existing external_id answers 200 with the existing workspace, even under a race.
  it('is idempotent on external_id, also under concurrent creates', async () => {
    const body = { name: 'Florist', external_id: 'cust-42', timezone: 'Europe/Berlin' };
    const results = await Promise.all(Array.from({ length: 8 }, () => call('POST', '/v1/workspaces', body)));
    const ids = new Set(results.map((r) => r.body.id));
    expect(ids.size).toBe(1);
    expect(results.filter((r) => r.status === 201)).toHaveLength(1);
    expect(results.filter((r) => r.status === 200)).toHaveLength(7);
    const again = await call('POST', '/v1/workspaces', { ...body, name: 'Other name' });
    expect(again.status).toBe(200);
    expect(again.body.name).toBe('Florist');
  });

  // Guarantee: lists page like GET /v1/events and filter by external_id.
  it('lists with pagination and the external_id filter', async () => {
    for (let i = 0; i < 3; i++)
      await call('POST', '/v1/workspaces', { name: `W${i}`, external_id: `page-${i}` });
    const first = await call('GET', '/v1/workspaces?limit=2&page=1');
    expect(first.body).toMatchObject({ page: 1, limit: 2 });
    expect(first.body.data).toHaveLength(2);
    const total = first.body.total as number;
    const last = await call('GET', `/v1/workspaces?limit=2&page=${Math.ceil(total / 2)}`);
    expect(last.body.data.length).toBe(total % 2 === 0 ? 2 : 1);
    const beyond = await call('GET', '/v1/workspaces?limit=2&page=999');
    expect(beyond.body).toMatchObject({ data: [], total });
    const filtered = await call('GET', '/v1/workspaces?external_id=page-1');
    expect(filtered.body.data.map((w: { name: string }) => w.name)).toEqual(['W1']);
    expect((await call('GET', '/v1/workspaces')).body.limit).toBe(50);
    for (const bad of ['limit=0', 'limit=201', 'page=0', 'page=abc', 'limit=1.5']) {
      const res = await call('GET', `/v1/workspaces?${bad}`);
      expect(res.status, bad).toBe(400);
      expect(res.body.error.field).toBe(bad.split('=')[0]);
    }
  });

  // Guarantee: PATCH changes only what is sent, validates the time zone and settings, clears external_id with null.
  it('updates fields', async () => {
    const created = await call('POST', '/v1/workspaces', { name: 'Cafe', external_id: 'cafe' });
    const id = created.body.id as string;
    const patched = await call('PATCH', `/v1/workspaces/${id}`, {
      timezone: 'America/New_York',
      settings: { brand: 'blue' },
    });
    expect(patched.body).toMatchObject({
      name: 'Cafe',
      timezone: 'America/New_York',
      settings: { brand: 'blue' },
      external_id: 'cafe',
    });
    expect(Date.parse(patched.body.updated)).toBeGreaterThanOrEqual(Date.parse(created.body.updated));
    expect(
      (await call('PATCH', `/v1/workspaces/${id}`, { timezone: 'Nowhere/City' })).body.error,
    ).toMatchObject({
      code: 'validation_error',
      field: 'timezone',
    });
    expect((await call('PATCH', `/v1/workspaces/${id}`, { settings: [1] })).body.error.field).toBe(
      'settings',
    );
    expect((await call('PATCH', `/v1/workspaces/${id}`, { external_id: null })).body.external_id).toBeNull();
    await call('POST', '/v1/workspaces', { name: 'Taken', external_id: 'taken' });
    expect((await call('PATCH', `/v1/workspaces/${id}`, { external_id: 'taken' })).body.error.code).toBe(
      'conflict',
    );
  });

  // Guarantee: ids are opaque: a malformed id and an unknown one are both 404 in the envelope.
  it('refuses bad and unknown ids', async () => {
    expect((await call('GET', '/v1/workspaces/nope')).body.error).toEqual({
      code: 'not_found',
      message: 'workspace not found',
    });
    const unknown = await call('GET', '/v1/workspaces/ws_00VbfVfQL8IcR5B7mN7OIM4hA');
    expect(unknown.status).toBe(404);
    expect(unknown.body.error.code).toBe('not_found');
  });

  // Guarantee: another partner's workspace does not exist for this partner.
  it("hides other partners' workspaces", async () => {
    const other = await stack.createPartner();
    const theirs = await api(stack.gateway.url, other.key)('POST', '/v1/workspaces', { name: 'Theirs' });
    expect((await call('GET', `/v1/workspaces/${theirs.body.id}`)).status).toBe(404);
    expect((await call('DELETE', `/v1/workspaces/${theirs.body.id}`)).status).toBe(404);
  });

  // Guarantee: delete is irreversible, revokes the workspace's keys at once, frees the external_id,
  // and emits workspace.deleted on NATS for the other services.
  it('deletes a workspace, its keys, and announces it', async () => {
    const bus = await connectBus({
      url: 'nats://127.0.0.1:4222',
      prefix: stack.prefix,
      name: 'test',
      logger: createLogger('test', { level: 'silent' }),
    });
    try {
      const created = await call('POST', '/v1/workspaces', { name: 'Gone', external_id: 'gone' });
      const id = created.body.id as string;
      const key = await call('POST', `/v1/workspaces/${id}/keys`, { label: 'ci' });
      const workspaceCall = api(stack.gateway.url, key.body.key);
      expect((await workspaceCall('GET', `/v1/workspaces/${id}`)).status).toBe(200);

      expect((await call('DELETE', `/v1/workspaces/${id}`)).status).toBe(204);
      expect((await call('GET', `/v1/workspaces/${id}`)).status).toBe(404);
      expect((await call('DELETE', `/v1/workspaces/${id}`)).status).toBe(404);
      expect((await workspaceCall('GET', `/v1/workspaces/${id}`)).status).toBe(401);
      const reused = await call('POST', '/v1/workspaces', { name: 'New', external_id: 'gone' });
      expect(reused.status).toBe(201);
      expect(reused.body.id).not.toBe(id);

      // Only deletions: earlier tests' changes announced workspace.updated on the same stream.
      const consumer = await bus.js.consumers.get(bus.subjects.streamName('internal'), {
        filter_subjects: bus.subjects.subject('workspace.deleted'),
      });
      const message = await consumer.next({ expires: 5_000 });
      expect(message?.subject).toBe(`${stack.prefix}.workspace.deleted`);
      expect(message?.headers?.get('Nats-Msg-Id')).toBe(message?.json<{ id: string }>().id);
      expect(message?.json()).toMatchObject({
        type: 'workspace.deleted',
        workspace: id,
        external_id: 'gone',
        partner: expect.any(String),
      });
    } finally {
      await bus.close();
    }
  });

  // Guarantee: a deleted workspace leaves only its tombstone (id, partner, deletion time): no
  // external_id, name, time zone, settings or key labels stay in identity (checked in the tables).
  it('keeps only a tombstone of a deleted workspace', async () => {
    const created = await call('POST', '/v1/workspaces', {
      name: 'Jane Doe Bakery',
      external_id: 'crm-jane-doe',
      timezone: 'Europe/Paris',
      settings: { owner_email: 'jane@example.com' },
    });
    const id = created.body.id as string;
    await call('POST', `/v1/workspaces/${id}/keys`, { label: "Jane's laptop" });
    expect((await call('DELETE', `/v1/workspaces/${id}`)).status).toBe(204);
    const client = new pg.Client({ connectionString: stack.databaseUrl });
    await client.connect();
    try {
      const { rows } = await client.query('SELECT * FROM identity.workspaces WHERE id = $1', [id]);
      expect(rows[0]).toMatchObject({
        id,
        partner_id: expect.stringMatching(/^ptn_/),
        deleted_at: expect.any(Date),
        external_id: null,
        name: null,
        timezone: null,
        settings: null,
      });
      const keys = await client.query(
        'SELECT label, revoked_at FROM identity.api_keys WHERE workspace_id = $1',
        [id],
      );
      expect(keys.rows).toEqual([{ label: '', revoked_at: expect.any(Date) }]);
      const text = JSON.stringify([rows, keys.rows]);
      for (const personal of ['Jane', 'jane', 'crm-jane-doe', 'Europe/Paris'])
        expect(text).not.toContain(personal);
    } finally {
      await client.end();
    }
    // Everything that reads workspaces still works around the tombstone.
    expect((await call('GET', `/v1/workspaces/${id}`)).status).toBe(404);
    expect((await call('GET', '/v1/workspaces')).status).toBe(200);
    expect(
      (await call('POST', '/v1/workspaces', { name: 'Again', external_id: 'crm-jane-doe' })).status,
    ).toBe(201);
  });

  // Guarantee: a deleted workspace's rows keep no reusable key (checked in the table itself).
  it('leaves no live key of a deleted workspace in the database', async () => {
    const client = new pg.Client({ connectionString: stack.databaseUrl });
    await client.connect();
    try {
      const { rows } = await client.query(
        `SELECT k.id FROM identity.api_keys k JOIN identity.workspaces w ON w.id = k.workspace_id
          WHERE w.deleted_at IS NOT NULL AND k.revoked_at IS NULL`,
      );
      expect(rows).toEqual([]);
    } finally {
      await client.end();
    }
  });
});
