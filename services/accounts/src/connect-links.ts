import { hashToken, randomBase62 } from '@svc/crypto';
import { errors, ServiceError } from '@svc/errors';
import { newId } from '@svc/ids';
import type { Db } from './db.ts';
import type { IdentityClient } from './events.ts';
import type { ConnectLink } from './generated/prisma/client.ts';
import { isNetwork, NETWORKS, type Network } from './grant-check.ts';

/** The secret in a connect link's URL. Only its hash is stored, like an API key's. */
const LINK_TOKEN_PREFIX = 'cnt_';
const MAX_LIFETIME_SECONDS = 7 * 86_400;
const LOOPBACK_HOSTS = new Set(['localhost', '127.0.0.1', '[::1]']);

export interface ConnectLinkInput {
  partnerId: string;
  workspaceId: string;
  networks: string[];
  redirectUrl: string;
  expiresInSeconds: number;
  /** The widget's session minting the link (empty for REST): the link ends with it. */
  embedSessionId: string;
}

export const connectPageUrl = (publicBaseUrl: string, token: string) =>
  `${publicBaseUrl.replace(/\/$/, '')}/connect/${token}`;

export async function createConnectLink(
  db: Db,
  identity: IdentityClient,
  input: ConnectLinkInput,
  defaults: { ttlSeconds: number; now?: Date },
): Promise<{ link: ConnectLink; token: string }> {
  await identity.getWorkspace({ partnerId: input.partnerId, workspaceId: input.workspaceId });
  const networks = checkNetworks(input.networks);
  const redirectUrl = input.redirectUrl ? checkRedirectUrl(input.redirectUrl) : null;
  const lifetime = input.expiresInSeconds || defaults.ttlSeconds;
  if (lifetime < 60 || lifetime > MAX_LIFETIME_SECONDS)
    throw errors.validation(
      'expires_in',
      `expires_in must be between 60 and ${MAX_LIFETIME_SECONDS} seconds`,
    );
  const sessionExpiresAtMs = input.embedSessionId ? await embedSessionExpiry(identity, input) : Infinity;
  const token = `${LINK_TOKEN_PREFIX}${randomBase62(32)}`;
  const now = defaults.now ?? new Date();
  const link = await db.connectLink.create({
    data: {
      id: newId('connectLink'),
      partnerId: input.partnerId,
      workspaceId: input.workspaceId,
      tokenHash: hashToken(token),
      networks,
      redirectUrl,
      expiresAt: new Date(Math.min(now.getTime() + lifetime * 1000, sessionExpiresAtMs)),
      embedSessionId: input.embedSessionId || null,
    },
  });
  return { link, token };
}

/**
 * When the embed session a widget link is minted for expires (Unix ms): the link may not outlive
 * it. The session must be live and of the caller's partner and workspace.
 */
async function embedSessionExpiry(identity: IdentityClient, input: ConnectLinkInput): Promise<number> {
  const session = await liveEmbedSession(identity, input.embedSessionId);
  if (!session) throw errors.unauthorized('this embed session has ended or expired');
  if (session.partnerId !== input.partnerId || session.workspaceId !== input.workspaceId)
    throw errors.forbidden('this embed session belongs to another workspace');
  return Date.parse(session.expiresAt);
}

/** The embed session, while it is live; undefined once ended, expired or purged. */
async function liveEmbedSession(identity: IdentityClient, sessionId: string) {
  try {
    const { session, live } = await identity.describeEmbedSession({ sessionId });
    return live ? session : undefined;
  } catch (error) {
    // Ended sessions are purged a day later: an unknown one has ended.
    if (error instanceof ServiceError && error.code === 'not_found') return undefined;
    throw error;
  }
}

/** Whether a widget link's embed session has ended or expired (a link minted over REST has none). */
export async function embedSessionEnded(identity: IdentityClient, link: ConnectLink): Promise<boolean> {
  return link.embedSessionId ? !(await liveEmbedSession(identity, link.embedSessionId)) : false;
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

export type LinkState = 'open' | 'expired' | 'unknown';

/** What reading a link needs: its table, and identity for the embed session of a widget link. */
interface LinkReader {
  db: Db;
  identity: IdentityClient;
}

/**
 * Finds the link a browser presents; never throws for a bad token (the page explains instead). A
 * widget link whose embed session has ended is expired: ending the session ends its links.
 */
export async function findLink(
  { db, identity }: LinkReader,
  token: string,
  now = new Date(),
): Promise<{ state: LinkState; link: ConnectLink | null }> {
  if (!token.startsWith(LINK_TOKEN_PREFIX)) return { state: 'unknown', link: null };
  const link = await db.connectLink.findUnique({ where: { tokenHash: hashToken(token) } });
  if (!link) return { state: 'unknown', link: null };
  return { state: await usableState(identity, link, now), link };
}

/** 'open' while the link may be used: not past its expiry, and its embed session (if any) live. */
async function usableState(
  identity: IdentityClient,
  link: ConnectLink,
  now = new Date(),
): Promise<'open' | 'expired'> {
  if (link.expiresAt <= now) return 'expired';
  return (await embedSessionEnded(identity, link)) ? 'expired' : 'open';
}

/** The link, when it can still be used; otherwise the error the hosted page turns into a message. */
export async function openLink(reader: LinkReader, token: string, now = new Date()): Promise<ConnectLink> {
  const { state, link } = await findLink(reader, token, now);
  if (state === 'unknown' || !link) throw errors.notFound('connect link');
  if (state === 'expired') throw new ServiceError('conflict', 'this connect link has expired');
  return link;
}
