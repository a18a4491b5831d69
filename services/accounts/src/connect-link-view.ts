import type { ConnectLinkView } from '@svc/contracts/public';
import type { ConnectLink } from './generated/prisma/client.ts';

/**
 * The link as partners see it (`ConnectLinkView`), with the page's URL: it carries the link's
 * token, which only its creation knows (the row keeps the token's hash).
 */
export function viewOfConnectLink(row: ConnectLink, url: string): ConnectLinkView {
  return {
    id: row.id,
    workspace: row.workspaceId,
    url,
    networks: row.networks as ConnectLinkView['networks'],
    redirect_url: row.redirectUrl || null,
    expires_at: row.expiresAt.toISOString(),
    created: row.createdAt.toISOString(),
  };
}
