import type { PageAccount } from '@svc/graph-client';
import type { Account } from './generated/prisma/client.ts';
import type { StateProblem } from './oauth-state.ts';

/**
 * What the hosted page shows at the end of a connect. Failures the user can meet (a reused state, a
 * denial, a Page without Instagram) are outcomes with a message, not errors.
 */
export type OutcomeStatus = 'connected' | 'partial' | 'failed' | 'denied' | 'choose_pages';

export interface ConnectOutcome {
  status: OutcomeStatus;
  accounts: Account[];
  problems: { subject: string; message: string }[];
  choiceId?: string;
  pages?: { pageId: string; name: string; instagramUsername: string }[];
  redirectUrl: string;
  workspaceName: string;
}

/** What every outcome of a link's connect carries: where to go back to, and the workspace's name. */
export type OutcomeBase = Omit<ConnectOutcome, 'status'>;

export const STATE_MESSAGES: Record<StateProblem, string> = {
  missing: 'This sign-in came back without its security code (state). Start again from the connect page.',
  forged:
    'This sign-in came back with a security code (state) we did not issue, so it was refused. Start again from the connect page.',
  reused:
    'This sign-in was already completed (its security code can be used once). Start again from the connect page to connect more accounts.',
  expired: 'This sign-in took too long and its security code expired. Start again from the connect page.',
  other_browser:
    'This sign-in came back to a different browser from the one that started it, so nothing was connected: a sign-in link sent by someone else could otherwise connect your accounts to their workspace. Open the connect link again in this browser and connect from there.',
};

export const LINK_GONE = 'This connect link no longer exists. Ask for a new one.';

export const SESSION_ENDED =
  'The session of the app this connection was started from has ended, so nothing was connected. Go back to the app and connect again from there.';

export const DENIED: ConnectOutcome['problems'][number] = {
  subject: 'Consent',
  message:
    'You cancelled at the consent screen, so nothing was connected. Start again whenever you are ready.',
};

export function failed(
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

export const pageChoiceView = (page: PageAccount) => ({
  pageId: page.id,
  name: page.name,
  instagramUsername: page.instagram_business_account?.username ?? '',
});
