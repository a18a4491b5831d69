import { api } from '@svc/testing';
import { type Stack, startStack } from '@svc/testing/stack';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';

/**
 * `external_id` is the partner's own reference and the key of its idempotent create (issue 23,
 * item 9): a workspace key may not set, change or clear it (it could claim a future customer's id,
 * and the 409 on a taken id would tell it which ids exist). A partner key still can.
 */
let stack: Stack;
let partner: ReturnType<typeof api>;

beforeAll(async () => {
  stack = await startStack();
  partner = api(stack.gateway.url, (await stack.createPartner()).key);
});
afterAll(() => stack.stop());

async function workspaceWithKey(externalId: string) {
  const workspace = await partner('POST', '/v1/workspaces', { name: 'Tenant', external_id: externalId });
  expect(workspace.status).toBe(201);
  const key = await partner('POST', `/v1/workspaces/${workspace.body.id}/keys`, { label: 'tenant' });
  expect(key.status).toBe(201);
  return { id: workspace.body.id as string, tenant: api(stack.gateway.url, key.body.key) };
}

describe('external_id is the partner key’s to set', () => {
  // Guarantee: a workspace key sending external_id (a new value, a taken one, or null) gets 403
  // forbidden naming external_id, and nothing changes; the taken id answers no 409 (no oracle).
  it('refuses external_id from a workspace key and changes nothing', async () => {
    const { id, tenant } = await workspaceWithKey('cust-100');
    await partner('POST', '/v1/workspaces', { name: 'Other customer', external_id: 'cust-200' });
    for (const external_id of ['future-customer', 'cust-200', null]) {
      const res = await tenant('PATCH', `/v1/workspaces/${id}`, { external_id, name: 'Renamed' });
      expect(res.status, JSON.stringify(external_id)).toBe(403);
      expect(res.body.error.code).toBe('forbidden');
      expect(res.body.error.message).toContain('external_id');
    }
    const after = await partner('GET', `/v1/workspaces/${id}`);
    expect(after.body).toMatchObject({ external_id: 'cust-100', name: 'Tenant' });
    // The partner's idempotent create still finds the right workspaces.
    const created = await partner('POST', '/v1/workspaces', { name: 'x', external_id: 'future-customer' });
    expect(created.status).toBe(201);
    expect(created.body.id).not.toBe(id);
  });

  // Guarantee: a workspace key still updates the other fields of its workspace.
  it('lets a workspace key change the other fields', async () => {
    const { id, tenant } = await workspaceWithKey('cust-300');
    const res = await tenant('PATCH', `/v1/workspaces/${id}`, { name: 'New name', timezone: 'Europe/Paris' });
    expect(res.status).toBe(200);
    expect(res.body).toMatchObject({ name: 'New name', timezone: 'Europe/Paris', external_id: 'cust-300' });
  });

  // Guarantee: a partner key still sets, changes and clears external_id.
  it('lets a partner key set and clear it', async () => {
    const { id } = await workspaceWithKey('cust-400');
    const changed = await partner('PATCH', `/v1/workspaces/${id}`, { external_id: 'cust-401' });
    expect(changed.status).toBe(200);
    expect(changed.body.external_id).toBe('cust-401');
    const cleared = await partner('PATCH', `/v1/workspaces/${id}`, { external_id: null });
    expect(cleared.status).toBe(200);
    expect(cleared.body.external_id).toBeNull();
  });

  // Guarantee: the OpenAPI document says who may send external_id on PATCH.
  it('documents the rule in the OpenAPI document', async () => {
    const doc = (await (await fetch(`${stack.gateway.url}/v1/openapi.json`)).json()) as {
      paths: Record<string, { patch: { requestBody: unknown } }>;
    };
    const body = JSON.stringify(doc.paths['/v1/workspaces/{id}']?.patch.requestBody);
    expect(body).toContain('Partner key only');
  });
});
