import type { EventEnvelope } from '@svc/contracts/public';
import type { Logger } from '@svc/logging';
import type { AccountStore } from './account-store.ts';
import type { ConnectStore } from './connect-store.ts';

/** `workspace.deleted`: every account is disconnected, tokens and metadata and links removed. */
export class WorkspacePurge {
  constructor(
    private readonly links: ConnectStore,
    private readonly accounts: AccountStore,
    private readonly logger: Logger,
  ) {}

  async purge(signal: EventEnvelope): Promise<void> {
    const workspaceId = signal.workspace;
    if (!workspaceId) return;
    // Links first: once account.disconnected is out, nothing of the workspace's connect flows is left.
    await this.links.purgeWorkspace(workspaceId);
    const accounts = await this.accounts.inWorkspace(workspaceId);
    // Identity no longer knows the workspace: its events carry the scope the signal gives.
    const scope = { partner: signal.partner, workspace: workspaceId, external_id: signal.external_id };
    await this.accounts.disconnect(accounts, scope, 'workspace_deleted');
    this.logger.info({ workspace: workspaceId, accounts: accounts.length }, 'workspace purged');
  }
}
