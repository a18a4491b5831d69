import type { WorkspaceDirectory } from '@svc/directory';
import { errors } from '@svc/errors';
import { isId } from '@svc/ids';
import type { AccountStore } from './account-store.ts';
import { toAccountMessage } from './account-view.ts';
import type { ConnectLinks } from './connect-links.ts';
import { type IdentityClient, workspaceName } from './identity-client.ts';

/** The hosted connect page a link opens: the workspace's accounts, and "Disconnect" beside each. */
export class ConnectPage {
  constructor(
    private readonly links: ConnectLinks,
    private readonly store: AccountStore,
    private readonly workspaces: Pick<WorkspaceDirectory, 'scope'>,
    private readonly identity: IdentityClient,
  ) {}

  /** What the page shows; only the link's state when it cannot be used (the page explains). */
  async view(linkToken: string) {
    const { state, link } = await this.links.find(linkToken);
    if (!link || state !== 'open') return { linkState: state };
    const [name, accounts] = await Promise.all([
      workspaceName(this.identity, link.workspaceId),
      this.store.inWorkspace(link.workspaceId),
    ]);
    return {
      linkState: state,
      workspaceName: name,
      networks: link.networks,
      accounts: accounts.map(toAccountMessage),
      expiresAt: link.expiresAt.toISOString(),
    };
  }

  /** "Disconnect" on the page: the link token names the workspace. */
  async disconnect(linkToken: string, accountId: string): Promise<void> {
    const { state, link } = await this.links.find(linkToken);
    if (!link || state !== 'open') throw errors.notFound('connect link');
    // The id comes from a page's URL: anything that is not an account id is no account.
    if (!isId('account', accountId)) throw errors.notFound('account');
    const account = await this.store.ofWorkspace(link.workspaceId, accountId);
    await this.store.disconnect([account], await this.workspaces.scope(link.workspaceId));
  }
}
