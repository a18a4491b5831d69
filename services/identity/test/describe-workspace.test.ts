import { createClient, IdentityService, type ServiceClient } from '@svc/contracts';
import { newId } from '@svc/ids';
import { uniquePrefix } from '@svc/testing';
import { type InProcess, type System, startSystem } from '@svc/testing/system';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createPartner } from '../src/admin/partners.ts';
import { viewOfWorkspace } from '../src/workspace-view.ts';
import { describeWorkspace, readWorkspace } from '../src/workspaces.ts';

/**
 * DescribeWorkspace (once per settled post, for event envelopes) runs as a named prepared statement
 * joining workspaces and partners instead of through Prisma. These tests pin what it must keep:
 * the partner's slug, the workspace as it is now, and not_found once the workspace is deleted.
 *
 * One identity service on a fresh database, reached over real gRPC.
 */
let system: System;
let service: InProcess['identity'];
let client: ServiceClient<typeof IdentityService>;
let partner: { id: string; slug: string };

beforeAll(async () => {
  system = await startSystem({
    services: ['identity'],
    prefix: uniquePrefix('i'),
    env: { LOG_LEVEL: 'silent' },
  });
  service = system.service('identity');
  client = createClient(IdentityService, `127.0.0.1:${service.port}`);
  ({ partner } = await createPartner(service.prisma, uniquePrefix('p')));
});

afterAll(async () => {
  client?.close();
  await system?.stop();
});

async function newWorkspace(externalId?: string) {
  const { workspace } = await client.createWorkspace({
    partnerId: partner.id,
    externalId,
    name: 'Shop',
    timezone: 'Europe/Paris',
    settingsJson: JSON.stringify({ brand: 'blue', nested: { n: 1 } }),
  });
  if (!workspace) throw new Error('no workspace created');
  return workspace;
}

describe('DescribeWorkspace', () => {
  // Guarantee: envelopes get the partner's slug and the workspace's current external_id (after an
  // update, not a stale one).
  it('returns the partner slug and the current external_id', async () => {
    const created = await newWorkspace('cust-1');
    const first = await client.describeWorkspace({ workspaceId: created.id });
    expect(first.partnerSlug).toBe(partner.slug);
    expect(first.workspace).toEqual(created);

    await client.updateWorkspace({ partnerId: partner.id, workspaceId: created.id, externalId: 'cust-2' });
    const updated = await client.describeWorkspace({ workspaceId: created.id });
    expect(updated.workspace?.externalId).toBe('cust-2');
    expect(updated.partnerSlug).toBe(partner.slug);

    await client.updateWorkspace({ partnerId: partner.id, workspaceId: created.id, clearExternalId: true });
    const cleared = await client.describeWorkspace({ workspaceId: created.id });
    expect(cleared.workspace?.externalId).toBeUndefined();
  });

  // Guarantee: a deleted workspace (deleted_at set) or an unknown id is not_found, so no event is
  // built for it.
  it('answers not_found for a deleted or unknown workspace', async () => {
    const workspace = await newWorkspace();
    await client.deleteWorkspace({ partnerId: partner.id, workspaceId: workspace.id });
    await expect(client.describeWorkspace({ workspaceId: workspace.id })).rejects.toMatchObject({
      code: 'not_found',
    });
    await expect(client.describeWorkspace({ workspaceId: newId('workspace') })).rejects.toMatchObject({
      code: 'not_found',
    });
  });

  // Guarantee: the statement's row mapping is the one readWorkspace uses, and both equal Prisma's
  // Workspace value (camelCase fields, Dates, JSON settings, nulls), so the message is unchanged.
  it('reads the same Workspace value as readWorkspace and Prisma', async () => {
    for (const workspace of [await newWorkspace('cust-3'), await newWorkspace()]) {
      const prisma = await service.prisma.workspace.findUnique({ where: { id: workspace.id } });
      const described = await describeWorkspace(service.pool, workspace.id);
      expect(described.workspace).toStrictEqual(prisma);
      expect(await readWorkspace(service.pool, partner.id, workspace.id)).toStrictEqual(prisma);
      const overGrpc = await client.describeWorkspace({ workspaceId: workspace.id });
      expect(overGrpc.workspace).toEqual(workspace);
      const viaGet = await client.getWorkspace({ partnerId: partner.id, workspaceId: workspace.id });
      expect(JSON.parse(viaGet.workspaceJson)).toEqual(viewOfWorkspace(described.workspace));
    }
  });
});
