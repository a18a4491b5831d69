import { eventRow, writeOutbox } from '@svc/bus';
import { GraphApiError, type InstagramUser, type PageAccount } from '@svc/graph-client';
import { newId } from '@svc/ids';
import type { AccountsContext } from './context.ts';
import { accountEvent, scopeOf } from './events.ts';
import type { Account, ConnectLink } from './generated/prisma/client.ts';
import { grantProblem, type Network, scopesFor } from './grant-check.ts';
import { sealToken } from './vault.ts';

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

/**
 * The accounts one granted Page yields: the Page itself (when connecting Pages) and its linked
 * Instagram account. Problems name exactly what is missing and how to fix it.
 */
export async function candidatesFor(
  ctx: AccountsContext,
  network: Network,
  page: PageAccount,
): Promise<{ candidates: ConnectCandidate[]; problems: { subject: string; message: string }[] }> {
  const granted = await grantOf(ctx, page);
  const candidates: ConnectCandidate[] = [];
  if (network === 'page_network') candidates.push(pageCandidate(page, granted));
  const problems = [];
  if (page.instagram_business_account) candidates.push(await instagramCandidate(ctx, page, granted));
  else if (network === 'photo_network') {
    problems.push({
      subject: page.name,
      message: `The Page "${page.name}" has no linked Instagram professional account. Link one (in the Page's settings: Linked accounts → Instagram; the Instagram account must be a business or creator account), then connect again.`,
    });
  }
  for (const c of candidates) if (c.problem) problems.push({ subject: c.displayName, message: c.problem });
  return { candidates, problems };
}

type Granted = Awaited<ReturnType<typeof grantOf>>;

/** What the Page's token grants, the fields every candidate of the Page shares, and a missing token's problem. */
async function grantOf(ctx: AccountsContext, page: PageAccount) {
  const pageToken = page.access_token ?? null;
  const info = pageToken ? await ctx.graph.oauth.debugToken(pageToken) : null;
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

async function instagramCandidate(
  ctx: AccountsContext,
  page: PageAccount,
  { grant, common, noToken }: Granted,
): Promise<ConnectCandidate> {
  const ig = page.instagram_business_account as NonNullable<PageAccount['instagram_business_account']>;
  const profile = common.token ? await instagramProfile(ctx, common.token, ig.id) : {};
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
async function instagramProfile(
  ctx: AccountsContext,
  token: string,
  igId: string,
): Promise<Partial<InstagramUser>> {
  try {
    return await ctx.graph.accounts.instagramUser(token, igId);
  } catch (error) {
    if (!(error instanceof GraphApiError)) throw error;
    ctx.logger.warn({ err: error.message, details: error.details }, 'could not read the Instagram profile');
    return {};
  }
}

/**
 * Creates or updates (reconnect: new token, scopes, status back to active) every candidate in one
 * transaction, with one `account.connected` event each.
 */
export async function saveConnected(
  ctx: AccountsContext,
  link: ConnectLink,
  candidates: ConnectCandidate[],
): Promise<Account[]> {
  if (candidates.length === 0) return [];
  const scope = await scopeOf(ctx.identity, link.workspaceId);
  const now = ctx.now();
  const accounts = await ctx.db.$transaction(async (tx) => {
    const saved: Account[] = [];
    for (const c of candidates) {
      const key = { workspaceId: link.workspaceId, network: c.network, platformId: c.platformId };
      const fields = {
        username: c.username,
        displayName: c.displayName,
        avatarUrl: c.avatarUrl,
        pageId: c.pageId,
        status: c.problem ? 'error' : 'active',
        lastError: c.problem,
        scopes: c.scopes,
        token: c.token ? sealToken(ctx.keyring, key, c.token) : null,
        tokenExpiresAt: c.tokenExpiresAt,
        providerUserId: c.providerUserId,
        connectedAt: now,
      };
      saved.push(
        await tx.account.upsert({
          where: { workspaceId_network_platformId: key },
          create: { id: newId('account'), partnerId: link.partnerId, ...key, ...fields },
          update: fields,
        }),
      );
    }
    await writeOutbox(
      tx,
      saved.map((account) => eventRow(accountEvent('account.connected', scope, account))),
    );
    return saved;
  });
  ctx.relay.kick();
  return accounts;
}
