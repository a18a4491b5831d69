import type { IdentityService, ServiceClient } from '@svc/contracts';

export type IdentityClient = ServiceClient<typeof IdentityService>;

/**
 * The workspace's name, which the hosted pages show: asked of identity each time, since the shared
 * WorkspaceDirectory keeps only a workspace's owner and event scope.
 */
export async function workspaceName(identity: IdentityClient, workspaceId: string): Promise<string> {
  const { workspace } = await identity.describeWorkspace({ workspaceId });
  return workspace?.name ?? '';
}
