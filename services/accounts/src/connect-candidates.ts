import { GraphApiError, type GraphClient, type InstagramUser, type PageAccount } from '@svc/graph-client';
import type { Logger } from '@svc/logging';
import { type GrantedScopes, grantProblem, type Network, scopesFor } from './grant-check.ts';

/** One account about to be connected, with the problem found in its grant (if any). */
export interface ConnectCandidate {
  network: Network;
  platformId: string;
  username: string;
  displayName: string;
  avatarUrl: string;
  pageId: string;
  scopes: string[];
  token: string | null;
  tokenExpiresAt: Date | null;
  providerUserId: string | null;
  problem: string | null;
}

type Problem = { subject: string; message: string };

/** What the Page's token grants, the fields every candidate of the Page shares, and a missing token's problem. */
interface Granted {
  grant: GrantedScopes;
  common: Pick<ConnectCandidate, 'pageId' | 'token' | 'tokenExpiresAt' | 'providerUserId'>;
  noToken: string | null;
}

/**
 * The accounts one granted Page yields: the Page itself (when connecting Pages) and its linked
 * Instagram account. Problems name exactly what is missing and how to fix it.
 */
export class ConnectCandidates {
  constructor(
    private readonly graph: GraphClient,
    private readonly logger: Logger,
  ) {}

  async fromPage(
    network: Network,
    page: PageAccount,
  ): Promise<{ candidates: ConnectCandidate[]; problems: Problem[] }> {
    const granted = await this.grantOf(page);
    const candidates: ConnectCandidate[] = [];
    if (network === 'page_network') candidates.push(pageCandidate(page, granted));
    const problems = [];
    if (page.instagram_business_account) candidates.push(await this.instagramCandidate(page, granted));
    else if (network === 'photo_network') {
      problems.push({
        subject: page.name,
        message: `The Page "${page.name}" has no linked Instagram professional account. Link one (in the Page's settings: Linked accounts → Instagram; the Instagram account must be a business or creator account), then connect again.`,
      });
    }
    for (const c of candidates) if (c.problem) problems.push({ subject: c.displayName, message: c.problem });
    return { candidates, problems };
  }

  private async grantOf(page: PageAccount): Promise<Granted> {
    const pageToken = page.access_token ?? null;
    const info = pageToken ? await this.graph.oauth.debugToken(pageToken) : null;
    const grant = { scopes: info?.scopes ?? [], granular: info?.granular_scopes };
    const common = {
      pageId: page.id,
      token: pageToken,
      tokenExpiresAt: info?.expires_at ? new Date(info.expires_at * 1000) : null,
      providerUserId: info?.user_id ?? null,
    };
    const noToken = pageToken
      ? null
      : `No Page access was granted for "${page.name}": you need a role on this Page (ask a Page admin), then connect again.`;
    return { grant, common, noToken };
  }

  private async instagramCandidate(
    page: PageAccount,
    { grant, common, noToken }: Granted,
  ): Promise<ConnectCandidate> {
    const ig = page.instagram_business_account as NonNullable<PageAccount['instagram_business_account']>;
    const profile = common.token ? await this.instagramProfile(common.token, ig.id) : {};
    const username = profile.username ?? ig.username ?? '';
    const scopes = scopesFor(grant, ig.id, page.id);
    return {
      ...common,
      network: 'photo_network',
      platformId: ig.id,
      username,
      displayName: profile.name ?? username,
      avatarUrl: profile.profile_picture_url ?? '',
      scopes,
      problem: noToken ?? grantProblem('photo_network', `The Instagram account @${username}`, scopes),
    };
  }

  /** A profile read failure (for example a missing permission) must not hide the account: the grant check names it. */
  private async instagramProfile(token: string, igId: string): Promise<Partial<InstagramUser>> {
    try {
      return await this.graph.accounts.instagramUser(token, igId);
    } catch (error) {
      if (!(error instanceof GraphApiError)) throw error;
      this.logger.warn(
        { err: error.message, details: error.details },
        'could not read the Instagram profile',
      );
      return {};
    }
  }
}

function pageCandidate(page: PageAccount, { grant, common, noToken }: Granted): ConnectCandidate {
  const scopes = scopesFor(grant, page.id, page.id);
  return {
    ...common,
    network: 'page_network',
    platformId: page.id,
    username: page.name,
    displayName: page.name,
    avatarUrl: page.picture?.data.url ?? '',
    scopes,
    problem: noToken ?? grantProblem('page_network', `The Page "${page.name}"`, scopes, page.tasks),
  };
}
