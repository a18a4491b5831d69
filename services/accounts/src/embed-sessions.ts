import type { Caller } from '@svc/db';
import { errors, ServiceError } from '@svc/errors';
import type { ConnectLink } from './generated/prisma/client.ts';
import type { IdentityClient } from './identity-client.ts';

/** The widget's embed sessions, which identity keeps: a link minted for one ends with it. */
export class EmbedSessions {
  constructor(private readonly identity: IdentityClient) {}

  /**
   * When the embed session a widget link is minted for expires (Unix ms): the link may not outlive
   * it. The session must be live and of the caller's partner and workspace.
   */
  async expiryFor(caller: Caller, workspaceId: string, sessionId: string): Promise<number> {
    const session = await this.live(sessionId);
    if (!session) throw errors.unauthorized('this embed session has ended or expired');
    if (session.partnerId !== caller.partnerId || session.workspaceId !== workspaceId)
      throw errors.forbidden('this embed session belongs to another workspace');
    return Date.parse(session.expiresAt);
  }

  /** Whether a widget link's embed session has ended or expired (a link minted over REST has none). */
  async ended(link: ConnectLink): Promise<boolean> {
    return link.embedSessionId ? !(await this.live(link.embedSessionId)) : false;
  }

  /** The embed session, while it is live; undefined once ended, expired or purged. */
  private async live(sessionId: string) {
    try {
      const { session, live } = await this.identity.describeEmbedSession({ sessionId });
      return live ? session : undefined;
    } catch (error) {
      // Ended sessions are purged a day later: an unknown one has ended.
      if (error instanceof ServiceError && error.code === 'not_found') return undefined;
      throw error;
    }
  }
}
