import type { WorkspaceView } from '@svc/contracts/public';
import type { LiveWorkspace } from './workspaces.ts';

/** The workspace as partners see it (`WorkspaceView`): the only place a workspace row becomes it. */
export function viewOfWorkspace(row: LiveWorkspace): WorkspaceView {
  return {
    id: row.id,
    external_id: row.externalId,
    name: row.name,
    timezone: row.timezone,
    settings: (row.settings ?? {}) as Record<string, unknown>,
    created: row.createdAt.toISOString(),
    updated: row.updatedAt.toISOString(),
  };
}
