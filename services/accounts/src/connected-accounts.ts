import type { WorkspaceDirectory } from '@svc/directory';
import type { PageAccount } from '@svc/graph-client';
import type { AccountStore } from './account-store.ts';
import type { ConnectCandidate, ConnectCandidates } from './connect-candidates.ts';
import type { Account, ConnectLink } from './generated/prisma/client.ts';
import type { Network } from './grant-check.ts';
import type { TokenVault } from './token-vault.ts';

/** The last step of a connect: the granted Pages' accounts saved to the link's workspace. */
export class ConnectedAccounts {
  constructor(
    private readonly candidates: ConnectCandidates,
    private readonly store: AccountStore,
    private readonly vault: TokenVault,
    private readonly workspaces: Pick<WorkspaceDirectory, 'scope'>,
    private readonly now: () => Date,
  ) {}

  /** Connects the accounts the Pages yield; `problems` say which could not be, or not fully. */
  async connect(
    link: ConnectLink,
    network: Network,
    pages: PageAccount[],
  ): Promise<{ accounts: Account[]; problems: { subject: string; message: string }[] }> {
    const candidates: ConnectCandidate[] = [];
    const problems = [];
    for (const page of pages) {
      const found = await this.candidates.fromPage(network, page);
      candidates.push(...found.candidates);
      problems.push(...found.problems);
    }
    return { accounts: await this.save(link, candidates), problems };
  }

  /** Every candidate created or updated (a reconnect), its token sealed, with `account.connected` each. */
  private async save(link: ConnectLink, candidates: ConnectCandidate[]): Promise<Account[]> {
    if (candidates.length === 0) return [];
    const scope = await this.workspaces.scope(link.workspaceId);
    const sealed = candidates.map((c) => {
      const key = { workspaceId: link.workspaceId, network: c.network, platformId: c.platformId };
      return { ...c, token: c.token ? this.vault.seal(key, c.token) : null };
    });
    return this.store.saveConnected(link, sealed, scope, this.now());
  }
}
