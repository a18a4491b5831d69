import { hashToken, randomBase62 } from '@svc/crypto';
import type { Caller } from '@svc/db';
import type { WorkspaceDirectory } from '@svc/directory';
import { errors, ServiceError } from '@svc/errors';
import { newId } from '@svc/ids';
import type { AccountsConfig } from './config.ts';
import type { ConnectStore } from './connect-store.ts';
import type { EmbedSessions } from './embed-sessions.ts';
import type { ConnectLink } from './generated/prisma/client.ts';
import { isNetwork, NETWORKS, type Network } from './grant-check.ts';

/** The secret in a connect link's URL. Only its hash is stored, like an API key's. */
const LINK_TOKEN_PREFIX = 'cnt_';
const MAX_LIFETIME_SECONDS = 7 * 86_400;
const LOOPBACK_HOSTS = new Set(['localhost', '127.0.0.1', '[::1]']);

interface ConnectLinkInput {
  workspaceId: string;
  networks: string[];
  redirectUrl: string;
  expiresInSeconds: number;
  /** The widget's session minting the link (empty for REST): the link ends with it. */
  embedSessionId: string;
}

type LinkState = 'open' | 'expired' | 'unknown';

/** Connect links: what a partner sends a user to, to connect accounts to one of its workspaces. */
export class ConnectLinks {
  constructor(
    private readonly store: ConnectStore,
    private readonly workspaces: Pick<WorkspaceDirectory, 'confirmOwned'>,
    private readonly sessions: EmbedSessions,
    private readonly config: Pick<AccountsConfig, 'CONNECT_LINK_TTL_SECONDS' | 'PUBLIC_BASE_URL'>,
    private readonly now: () => Date,
  ) {}

  /** A new link of the caller's workspace, and its page's URL (which only its creation knows). */
  async create(caller: Caller, input: ConnectLinkInput): Promise<{ link: ConnectLink; url: string }> {
    await this.workspaces.confirmOwned(caller, input.workspaceId);
    const networks = checkNetworks(input.networks);
    const redirectUrl = input.redirectUrl ? checkRedirectUrl(input.redirectUrl) : null;
    const lifetime = input.expiresInSeconds || this.config.CONNECT_LINK_TTL_SECONDS;
    if (lifetime < 60 || lifetime > MAX_LIFETIME_SECONDS)
      throw errors.validation(
        'expires_in',
        `expires_in must be between 60 and ${MAX_LIFETIME_SECONDS} seconds`,
      );
    const sessionExpiresAtMs = input.embedSessionId
      ? await this.sessions.expiryFor(caller, input.workspaceId, input.embedSessionId)
      : Infinity;
    const token = `${LINK_TOKEN_PREFIX}${randomBase62(32)}`;
    const link = await this.store.createLink({
      id: newId('connectLink'),
      partnerId: caller.partnerId,
      workspaceId: input.workspaceId,
      tokenHash: hashToken(token),
      networks,
      redirectUrl,
      expiresAt: new Date(Math.min(this.now().getTime() + lifetime * 1000, sessionExpiresAtMs)),
      embedSessionId: input.embedSessionId || null,
    });
    return { link, url: `${this.config.PUBLIC_BASE_URL.replace(/\/$/, '')}/connect/${token}` };
  }

  /**
   * Finds the link a browser presents; never throws for a bad token (the page explains instead). A
   * widget link whose embed session has ended is expired: ending the session ends its links.
   */
  async find(token: string): Promise<{ state: LinkState; link: ConnectLink | null }> {
    const now = this.now();
    if (!token.startsWith(LINK_TOKEN_PREFIX)) return { state: 'unknown', link: null };
    const link = await this.store.linkByTokenHash(hashToken(token));
    if (!link) return { state: 'unknown', link: null };
    if (link.expiresAt <= now) return { state: 'expired', link };
    return { state: (await this.sessions.ended(link)) ? 'expired' : 'open', link };
  }

  /** The link, when it can still be used; otherwise the error the hosted page turns into a message. */
  async open(token: string): Promise<ConnectLink> {
    const { state, link } = await this.find(token);
    if (state === 'unknown' || !link) throw errors.notFound('connect link');
    if (state === 'expired') throw new ServiceError('conflict', 'this connect link has expired');
    return link;
  }

  /** The link an OAuth state or page choice was issued for, while its embed session (if any) lasts. */
  async stillUsable(id: string): Promise<ConnectLink | 'gone' | 'session_ended'> {
    const link = await this.store.linkById(id);
    if (!link) return 'gone';
    return (await this.sessions.ended(link)) ? 'session_ended' : link;
  }
}

function checkNetworks(networks: string[]): Network[] {
  if (networks.length === 0) return [...NETWORKS];
  const unknown = networks.find((n) => !isNetwork(n));
  if (unknown !== undefined)
    throw errors.validation('networks', `unknown network "${unknown}"; use ${NETWORKS.join(' or ')}`);
  return [...new Set(networks as Network[])];
}

/** https anywhere, or http to this machine (a partner developing locally). */
export function checkRedirectUrl(text: string): string {
  let url: URL;
  try {
    url = new URL(text);
  } catch {
    throw errors.validation('redirect_url', 'redirect_url must be an absolute URL');
  }
  const local = url.protocol === 'http:' && LOOPBACK_HOSTS.has(url.hostname);
  if (url.protocol !== 'https:' && !local)
    throw errors.validation(
      'redirect_url',
      'redirect_url must use https (http is accepted for localhost only)',
    );
  if (url.username || url.password)
    throw errors.validation('redirect_url', 'redirect_url must not carry credentials');
  return url.toString();
}
