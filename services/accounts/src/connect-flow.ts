import { hashToken, randomBase62, type SealedValues } from '@svc/crypto';
import { errors } from '@svc/errors';
import { GraphApiError, type PageAccount } from '@svc/graph-client';
import { embedSessionEnded, openLink } from './connect-links.ts';
import { type AccountsContext, oauthRedirectUri } from './context.ts';
import type { Db } from './db.ts';
import type { Account, ConnectLink } from './generated/prisma/client.ts';
import { isNetwork, type Network, requestedScopes } from './grant-check.ts';
import { consumeState, issueState, StateError, type StateProblem } from './oauth-state.ts';
import { type ConnectCandidate, candidatesFor, saveConnected } from './save-connected.ts';

/**
 * The hosted connect flow: start (302 to the consent dialog with a signed single-use state),
 * callback (code → long-lived token → pages and linked Instagram accounts), the page picker when
 * several Pages were granted, and the outcome the hosted page shows. Failures the user can meet
 * (a reused state, a denial, a Page without Instagram) are outcomes with a message, not errors.
 */
type OutcomeStatus = 'connected' | 'partial' | 'failed' | 'denied' | 'choose_pages';

export interface ConnectOutcome {
  status: OutcomeStatus;
  accounts: Account[];
  problems: { subject: string; message: string }[];
  choiceId?: string;
  pages?: { pageId: string; name: string; instagramUsername: string }[];
  redirectUrl: string;
  workspaceName: string;
}

const CHOICE_TTL_MS = 15 * 60_000;

const STATE_MESSAGES: Record<StateProblem, string> = {
  missing: 'This sign-in came back without its security code (state). Start again from the connect page.',
  forged:
    'This sign-in came back with a security code (state) we did not issue, so it was refused. Start again from the connect page.',
  reused:
    'This sign-in was already completed (its security code can be used once). Start again from the connect page to connect more accounts.',
  expired: 'This sign-in took too long and its security code expired. Start again from the connect page.',
  other_browser:
    'This sign-in came back to a different browser from the one that started it, so nothing was connected: a sign-in link sent by someone else could otherwise connect your accounts to their workspace. Open the connect link again in this browser and connect from there.',
};

const SESSION_ENDED =
  'The session of the app this connection was started from has ended, so nothing was connected. Go back to the app and connect again from there.';

/** Where start sends the browser, and what binds the consent to that browser (see oauth-state.ts). */
interface StartedConnect {
  dialogUrl: string;
  state: string;
  browserNonce: string;
  callbackUrl: string;
  stateTtlSeconds: number;
}

export async function startConnect(
  ctx: AccountsContext,
  linkToken: string,
  network: string,
): Promise<StartedConnect> {
  const link = await openLink(ctx, linkToken, ctx.now());
  if (!isNetwork(network) || !link.networks.includes(network))
    throw errors.validation('network', `this connect link does not offer "${network}"`);
  const ttlSeconds = ctx.config.OAUTH_STATE_TTL_SECONDS;
  const { state, browserNonce } = await issueState(ctx.db, ctx.config.OAUTH_STATE_SECRET, {
    linkId: link.id,
    network,
    ttlSeconds,
    now: ctx.now(),
  });
  const callbackUrl = oauthRedirectUri(ctx.config);
  const dialogUrl = ctx.graph.oauth.dialogUrl({
    redirectUri: callbackUrl,
    state,
    scopes: requestedScopes(network),
  });
  return { dialogUrl, state, browserNonce, callbackUrl, stateTtlSeconds: ttlSeconds };
}

export async function completeConnect(
  ctx: AccountsContext,
  input: { state: string; code: string; error: string; browserNonce: string },
): Promise<ConnectOutcome> {
  let bound: { linkId: string; network: string };
  try {
    bound = await consumeState(ctx.db, ctx.config.OAUTH_STATE_SECRET, input, ctx.now());
  } catch (error) {
    if (error instanceof StateError) return failed(STATE_MESSAGES[error.problem]);
    throw error;
  }
  const link = await ctx.db.connectLink.findUnique({ where: { id: bound.linkId } });
  if (!link) return failed('This connect link no longer exists. Ask for a new one.');
  if (await embedSessionEnded(ctx.identity, link)) return failed(SESSION_ENDED);
  const base = await outcomeBase(ctx, link);
  if (input.error) {
    return {
      ...base,
      status: 'denied',
      problems: [
        {
          subject: 'Consent',
          message:
            'You cancelled at the consent screen, so nothing was connected. Start again whenever you are ready.',
        },
      ],
    };
  }
  if (!input.code) return failed('The sign-in came back without an authorization code.', base);
  const network = bound.network as Network;
  let userToken: string;
  let pages: PageAccount[];
  try {
    userToken = await exchangeForUserToken(ctx, input.code);
    pages = await ctx.graph.accounts.pages(userToken);
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
  if (pages.length > 1) return offerPageChoice(ctx, link, network, userToken, pages, base);
  return connectPages(ctx, link, network, pages, base);
}

/** The page picker's answer: connects the chosen Pages with the grant held for this choice. */
export async function choosePages(
  ctx: AccountsContext,
  choiceId: string,
  pageIds: string[],
): Promise<ConnectOutcome> {
  const idHash = hashToken(choiceId);
  const choice = await ctx.db.pageChoice.findUnique({ where: { idHash } });
  const now = ctx.now();
  if (!choice?.userToken || choice.usedAt || choice.expiresAt <= now)
    return failed('This choice of Pages expired or was already made. Start again from the connect page.');
  const link = await ctx.db.connectLink.findUnique({ where: { id: choice.linkId } });
  if (!link) return failed('This connect link no longer exists. Ask for a new one.');
  if (await embedSessionEnded(ctx.identity, link)) return failed(SESSION_ENDED);
  const base = await outcomeBase(ctx, link);
  const userToken = ctx.keyring.decrypt(choice.userToken, idHash);
  const granted = await ctx.graph.accounts.pages(userToken);
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
  const claimed = await ctx.db.pageChoice.updateMany({
    where: { idHash, usedAt: null },
    data: { usedAt: now, userToken: null },
  });
  if (claimed.count === 0) return failed('This choice of Pages was already made.');
  return connectPages(ctx, link, choice.network as Network, chosen, base);
}

async function exchangeForUserToken(ctx: AccountsContext, code: string): Promise<string> {
  const short = await ctx.graph.oauth.exchangeCode({ code, redirectUri: oauthRedirectUri(ctx.config) });
  const long = await ctx.graph.oauth.exchangeForLongLived(short.access_token);
  return long.access_token;
}

async function offerPageChoice(
  ctx: AccountsContext,
  link: ConnectLink,
  network: Network,
  userToken: string,
  pages: PageAccount[],
  base: Omit<ConnectOutcome, 'status'>,
): Promise<ConnectOutcome> {
  const choiceId = `pc_${randomBase62(32)}`;
  const idHash = hashToken(choiceId);
  await ctx.db.pageChoice.create({
    data: {
      idHash,
      linkId: link.id,
      network,
      userToken: ctx.keyring.encrypt(userToken, idHash),
      expiresAt: new Date(ctx.now().getTime() + CHOICE_TTL_MS),
    },
  });
  return { ...base, status: 'choose_pages', choiceId, pages: pages.map(pageChoiceView) };
}

async function connectPages(
  ctx: AccountsContext,
  link: ConnectLink,
  network: Network,
  pages: PageAccount[],
  base: Omit<ConnectOutcome, 'status'>,
): Promise<ConnectOutcome> {
  const candidates: ConnectCandidate[] = [];
  const problems: ConnectOutcome['problems'] = [];
  for (const page of pages) {
    const found = await candidatesFor(ctx, network, page);
    candidates.push(...found.candidates);
    problems.push(...found.problems);
  }
  const accounts = await saveConnected(ctx, link, candidates);
  const status: OutcomeStatus =
    accounts.length === 0 ? 'failed' : problems.length > 0 ? 'partial' : 'connected';
  return { ...base, status, accounts, problems };
}

async function outcomeBase(ctx: AccountsContext, link: ConnectLink) {
  const { workspace } = await ctx.identity.describeWorkspace({ workspaceId: link.workspaceId });
  return {
    accounts: [],
    problems: [],
    redirectUrl: link.redirectUrl ?? '',
    workspaceName: workspace?.name ?? '',
  };
}

function failed(
  message: string,
  base: { redirectUrl: string; workspaceName: string } = { redirectUrl: '', workspaceName: '' },
): ConnectOutcome {
  return {
    status: 'failed',
    accounts: [],
    problems: [{ subject: 'Sign-in', message }],
    redirectUrl: base.redirectUrl,
    workspaceName: base.workspaceName,
  };
}

const pageChoiceView = (page: PageAccount) => ({
  pageId: page.id,
  name: page.name,
  instagramUsername: page.instagram_business_account?.username ?? '',
});

/**
 * The user tokens held for a pending page choice (bound to the choice's id hash), as
 * `pnpm rotate-keys` re-seals them (see `reseal`): they live 15 minutes, but one may be open
 * while the keys rotate.
 */
export function sealedPageChoices(db: Db): SealedValues {
  return {
    what: 'page choice tokens',
    async page(after, take) {
      const rows = await db.pageChoice.findMany({
        where: { userToken: { not: null }, idHash: { gt: after } },
        orderBy: { idHash: 'asc' },
        take,
      });
      return rows.map((row) => ({ key: row.idHash, sealed: row.userToken as string, aad: row.idHash }));
    },
    async replace({ key, sealed }, userToken) {
      const { count } = await db.pageChoice.updateMany({
        where: { idHash: key, userToken: sealed },
        data: { userToken },
      });
      return count === 1;
    },
  };
}
