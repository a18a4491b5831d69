import type { CreatedEmbedSessionView, EmbedSessionView } from '@svc/contracts/public';
import type { EmbedSession } from './generated/prisma/client.ts';

/** The session as partners see it (`EmbedSessionView`): the only place a session row becomes it. */
export function viewOfEmbedSession(row: EmbedSession): EmbedSessionView {
  return {
    id: row.id,
    workspace: row.workspaceId,
    surfaces: row.surfaces as EmbedSessionView['surfaces'],
    allowed_origins: row.allowedOrigins,
    expires_at: row.expiresAt.toISOString(),
    created: row.createdAt.toISOString(),
  };
}

/** The answer to minting a session, with its token (only ever here: the row keeps its hash). */
export function viewOfCreatedEmbedSession(row: EmbedSession, plainToken: string): CreatedEmbedSessionView {
  const { id, ...rest } = viewOfEmbedSession(row);
  return { id, token: plainToken, ...rest };
}
