import { AccountsApi } from './accounts.ts';
import type { GraphClientConfig } from './config.ts';
import { InboxApi } from './inbox.ts';
import { InstagramApi } from './instagram.ts';
import { OAuthApi } from './oauth.ts';
import { PagesApi } from './pages.ts';
import { GraphTransport } from './transport.ts';

/**
 * The product's Graph API client. Built from an explicit config (no global state): base URL and
 * version decide whether it talks to Meta or to the sandbox.
 */
export class GraphClient {
  readonly oauth: OAuthApi;
  readonly accounts: AccountsApi;
  readonly instagram: InstagramApi;
  readonly pages: PagesApi;
  readonly inbox: InboxApi;
  readonly transport: GraphTransport;

  constructor(readonly config: GraphClientConfig) {
    this.transport = new GraphTransport(config);
    this.oauth = new OAuthApi(this.transport);
    this.accounts = new AccountsApi(this.transport);
    this.instagram = new InstagramApi(this.transport);
    this.pages = new PagesApi(this.transport);
    this.inbox = new InboxApi(this.transport);
  }

  close(): Promise<void> {
    return this.transport.close();
  }
}
