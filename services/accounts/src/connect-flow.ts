import { errors } from '@svc/errors';
import { GraphApiError, type PageAccount } from '@svc/graph-client';
import type { ConnectLinks } from './connect-links.ts';
import {
  type ConnectOutcome,
  DENIED,
  failed,
  LINK_GONE,
  type OutcomeBase,
  type OutcomeStatus,
  pageChoiceView,
  SESSION_ENDED,
  STATE_MESSAGES,
} from './connect-outcome.ts';
import type { ConnectedAccounts } from './connected-accounts.ts';
import type { ConsentDialog } from './consent-dialog.ts';
import type { ConnectLink } from './generated/prisma/client.ts';
import { isNetwork, type Network } from './grant-check.ts';
import { type IdentityClient, workspaceName } from './identity-client.ts';
import { type OAuthStates, StateError } from './oauth-state.ts';
import type { PageChoices } from './page-choices.ts';

/** Where start sends the browser, and what binds the consent to that browser (see oauth-state.ts). */
interface StartedConnect {
  dialogUrl: string;
  state: string;
  browserNonce: string;
  callbackUrl: string;
  stateTtlSeconds: number;
}

/**
 * The hosted connect flow: start (302 to the consent dialog with a signed single-use state),
 * callback (code → long-lived token → pages and linked Instagram accounts), the page picker when
 * several Pages were granted, and the outcome the hosted page shows.
 */
export class ConnectFlow {
  constructor(
    private readonly links: ConnectLinks,
    private readonly states: OAuthStates,
    private readonly dialog: ConsentDialog,
    private readonly choices: PageChoices,
    private readonly connected: ConnectedAccounts,
    private readonly identity: IdentityClient,
  ) {}

  async start(linkToken: string, network: string): Promise<StartedConnect> {
    const link = await this.links.open(linkToken);
    if (!isNetwork(network) || !link.networks.includes(network))
      throw errors.validation('network', `this connect link does not offer "${network}"`);
    const { state, browserNonce, ttlSeconds } = await this.states.issue(link.id, network);
    const dialogUrl = this.dialog.url(state, network);
    return {
      dialogUrl,
      state,
      browserNonce,
      callbackUrl: this.dialog.redirectUri,
      stateTtlSeconds: ttlSeconds,
    };
  }

  /** The consent dialog's callback. */
  async complete(input: {
    state: string;
    code: string;
    error: string;
    browserNonce: string;
  }): Promise<ConnectOutcome> {
    let bound: { linkId: string; network: string };
    try {
      bound = await this.states.consume(input);
    } catch (error) {
      if (error instanceof StateError) return failed(STATE_MESSAGES[error.problem]);
      throw error;
    }
    const link = await this.links.stillUsable(bound.linkId);
    if (link === 'gone') return failed(LINK_GONE);
    if (link === 'session_ended') return failed(SESSION_ENDED);
    const base = await this.outcomeBase(link);
    if (input.error) return { ...base, status: 'denied', problems: [DENIED] };
    if (!input.code) return failed('The sign-in came back without an authorization code.', base);
    const network = bound.network as Network;
    let userToken: string;
    let pages: PageAccount[];
    try {
      userToken = await this.dialog.userToken(input.code);
      pages = await this.dialog.pages(userToken);
    } catch (error) {
      if (error instanceof GraphApiError)
        return failed(`The network refused the sign-in: ${error.message}. Try again.`, base);
      throw error;
    }
    if (pages.length === 0)
      return failed(
        'No Facebook Page was shared. Connect again and select at least one Page: Instagram professional accounts are reached through the Page they are linked to.',
        base,
      );
    if (pages.length > 1) {
      const choiceId = await this.choices.offer(link.id, network, userToken);
      return { ...base, status: 'choose_pages', choiceId, pages: pages.map(pageChoiceView) };
    }
    return this.connectPages(link, network, pages, base);
  }

  /** The page picker's answer: connects the chosen Pages with the grant held for this choice. */
  async choosePages(choiceId: string, pageIds: string[]): Promise<ConnectOutcome> {
    const choice = await this.choices.pending(choiceId);
    if (!choice)
      return failed('This choice of Pages expired or was already made. Start again from the connect page.');
    const link = await this.links.stillUsable(choice.linkId);
    if (link === 'gone') return failed(LINK_GONE);
    if (link === 'session_ended') return failed(SESSION_ENDED);
    const base = await this.outcomeBase(link);
    const granted = await this.dialog.pages(this.choices.userToken(choice));
    const chosen = granted.filter((p) => pageIds.includes(p.id));
    if (chosen.length === 0) {
      return {
        ...base,
        status: 'choose_pages',
        choiceId,
        pages: granted.map(pageChoiceView),
        problems: [{ subject: 'Pages', message: 'Select at least one Page to connect.' }],
      };
    }
    if (!(await this.choices.claim(choice))) return failed('This choice of Pages was already made.');
    return this.connectPages(link, choice.network as Network, chosen, base);
  }

  private async connectPages(
    link: ConnectLink,
    network: Network,
    pages: PageAccount[],
    base: OutcomeBase,
  ): Promise<ConnectOutcome> {
    const { accounts, problems } = await this.connected.connect(link, network, pages);
    const status: OutcomeStatus =
      accounts.length === 0 ? 'failed' : problems.length > 0 ? 'partial' : 'connected';
    return { ...base, status, accounts, problems };
  }

  private async outcomeBase(link: ConnectLink): Promise<OutcomeBase> {
    return {
      accounts: [],
      problems: [],
      redirectUrl: link.redirectUrl ?? '',
      workspaceName: await workspaceName(this.identity, link.workspaceId),
    };
  }
}
