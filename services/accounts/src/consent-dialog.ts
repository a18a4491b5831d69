import type { GraphClient, PageAccount } from '@svc/graph-client';
import type { AccountsConfig } from './config.ts';
import { type Network, requestedScopes } from './grant-check.ts';

/** The provider's consent dialog: where start sends the browser, and what its callback brings back. */
export class ConsentDialog {
  /** The redirect URI given to the consent dialog; the code exchange must repeat it exactly. */
  readonly redirectUri: string;

  constructor(
    private readonly graph: GraphClient,
    config: Pick<AccountsConfig, 'PUBLIC_BASE_URL'>,
  ) {
    this.redirectUri = `${config.PUBLIC_BASE_URL.replace(/\/$/, '')}/connect/oauth/callback`;
  }

  url(state: string, network: Network): string {
    return this.graph.oauth.dialogUrl({
      redirectUri: this.redirectUri,
      state,
      scopes: requestedScopes(network),
    });
  }

  /** The long-lived user token the callback's code is exchanged for. */
  async userToken(code: string): Promise<string> {
    const short = await this.graph.oauth.exchangeCode({ code, redirectUri: this.redirectUri });
    const long = await this.graph.oauth.exchangeForLongLived(short.access_token);
    return long.access_token;
  }

  /** The Pages the user granted, with their linked Instagram accounts. */
  pages(userToken: string): Promise<PageAccount[]> {
    return this.graph.accounts.pages(userToken);
  }
}
