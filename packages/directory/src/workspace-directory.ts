import type { Bus, EventScope } from '@svc/bus';
import type { IdentityService, ServiceClient } from '@svc/contracts';
import type { Caller } from '@svc/db';
import { errors } from '@svc/errors';
import { type KnownWorkspace, WorkspaceCache } from './workspace-cache.ts';

type IdentityClient = ServiceClient<typeof IdentityService>;

/**
 * What a service learns of workspaces, which identity owns: whose each one is, and the scope its
 * events carry. Kept until identity announces a change (see WorkspaceCache).
 */
export class WorkspaceDirectory {
  private readonly cache: WorkspaceCache;

  constructor(
    bus: Bus,
    private readonly identity: IdentityClient,
  ) {
    this.cache = new WorkspaceCache(bus, (workspaceId) => describeWorkspace(identity, workspaceId));
  }

  /**
   * The caller's live workspace, else not_found. A workspace deleted a moment ago passes until its
   * `workspace.deleted` announcement arrives (milliseconds). A check in another service cannot hold
   * the workspace against deletion anyway; the cache only widens that window by the announcement's
   * trip.
   */
  async assertOwned(caller: Caller, workspaceId: string): Promise<void> {
    const workspace = await this.cache.get(workspaceId);
    if (workspace.partnerId !== caller.partnerId) throw errors.notFound('workspace');
  }

  /** Asks identity now (not kept): for writes that must not see a workspace deleted a moment ago. */
  async confirmOwned(caller: Caller, workspaceId: string): Promise<void> {
    await this.identity.getWorkspace({ partnerId: caller.partnerId, workspaceId });
  }

  /** The partner slug and external_id a workspace's events carry now. */
  async scope(workspaceId: string): Promise<EventScope> {
    return (await this.cache.get(workspaceId)).scope;
  }

  close(): void {
    this.cache.close();
  }
}

async function describeWorkspace(identity: IdentityClient, workspaceId: string): Promise<KnownWorkspace> {
  const { workspace, partnerSlug } = await identity.describeWorkspace({ workspaceId });
  return {
    partnerId: workspace?.partnerId ?? '',
    scope: { partner: partnerSlug, workspace: workspaceId, external_id: workspace?.externalId ?? null },
  };
}
