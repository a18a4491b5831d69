import { hashToken } from '@svc/crypto';

/**
 * The cookie that binds an OAuth consent to the browser that started it: /start sets the nonce
 * accounts issued with the state, the callback hands it back, and accounts refuses a callback whose
 * browser does not bring it (see services/accounts/src/oauth-state.ts). Without it, a consent URL
 * made for one connect link could be sent to someone else, whose Pages would land in the sender's
 * workspace.
 *
 * One cookie per started flow, named after its state, so flows started in two tabs do not replace
 * each other's; scoped to the callback's path (the only place it is read) and living as long as
 * the state. Lax: it still comes along on the top-level GET back from the consent screen.
 */
const NAME_PREFIX = 'svc_connect_browser_';

/** What accounts answers at start (StartConnectResponse). */
interface StartedFlow {
  state: string;
  browserNonce: string;
  callbackUrl: string;
  stateTtlSeconds: number;
}

/** The cookie's name for one state: not secret (the state is in the URL), only distinct per flow. */
export const bindingCookieName = (state: string) => `${NAME_PREFIX}${hashToken(state).slice(0, 24)}`;

export function bindingCookie(flow: StartedFlow): string {
  const callback = new URL(flow.callbackUrl);
  const secure = callback.protocol === 'https:' ? '; Secure' : '';
  return `${bindingCookieName(flow.state)}=${flow.browserNonce}; Path=${callback.pathname}; Max-Age=${flow.stateTtlSeconds}; HttpOnly; SameSite=Lax${secure}`;
}

/** Drops the flow's cookie once its callback came (the state is single-use either way). */
export const spentBindingCookie = (state: string, callbackPath: string) =>
  `${bindingCookieName(state)}=; Path=${callbackPath}; Max-Age=0; HttpOnly; SameSite=Lax`;
