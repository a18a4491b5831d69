import type { EmbedSession } from '@svc/contracts';
import { z } from 'zod';
import type { IdentityClient } from '../clients.ts';
import { type AnyRoute, defineRoute } from '../http/route.ts';
import { idField, paged, pagination, pathId, timestamp } from '../http/schemas.ts';

export const surface = z.enum(['connect', 'inbox', 'publish']);

const sessionView = z
  .object({
    id: z.string(),
    workspace: z.string(),
    surfaces: z.array(surface),
    allowed_origins: z.array(z.string()).describe('the origins whose pages may frame the widget'),
    expires_at: timestamp,
    created: timestamp,
  })
  .meta({ id: 'EmbedSession' });

function toSessionView(s: EmbedSession): z.infer<typeof sessionView> {
  return {
    id: s.id,
    workspace: s.workspaceId,
    surfaces: s.surfaces as z.infer<typeof surface>[],
    allowed_origins: s.allowedOrigins,
    expires_at: s.expiresAt,
    created: s.createdAt,
  };
}

/**
 * Embed sessions, minted by the partner's server for its page's widget (partner key only). The
 * token is in the creation answer only; identity keeps its SHA-256.
 */
export function embedSessionRoutes(identity: IdentityClient): AnyRoute[] {
  return [
    defineRoute({
      method: 'POST',
      url: '/v1/embed-sessions',
      summary:
        'Mint an embed session for the widget: a short-lived sve_ token for one workspace (in this response only)',
      permission: 'partnerOnly',
      body: z.strictObject({
        workspace: idField('workspace', 'workspace'),
        surfaces: z
          .array(surface)
          .min(1)
          .max(3)
          .optional()
          .describe('what the widget may do; all three by default'),
        allowed_origins: z
          .array(z.string().max(300))
          .min(1)
          .max(20)
          .describe(
            'origins of the pages that may frame the widget, each exactly as browsers serialize it (https://host[:port]: lowercase, no default port, no trailing slash, path or credentials; http only to loopback in development)',
          ),
        expires_in: z.number().int().min(60).max(86_400).optional().describe('seconds; default 3600'),
      }),
      status: 201,
      response: sessionView.extend({ token: z.string().describe('the sve_ token; shown only here') }),
      async handler({ principal, body }) {
        const { session, plainToken } = await identity.createEmbedSession({
          partnerId: principal.partnerId,
          workspaceId: body.workspace,
          surfaces: body.surfaces ?? [],
          allowedOrigins: body.allowed_origins,
          expiresInSeconds: body.expires_in ?? 0,
        });
        if (!session) throw new Error('identity returned no session');
        const { id, ...rest } = toSessionView(session);
        return { id, token: plainToken, ...rest };
      },
    }),
    defineRoute({
      method: 'GET',
      url: '/v1/embed-sessions',
      summary: 'List the live embed sessions (never their tokens), oldest first',
      permission: 'partnerOnly',
      query: z.strictObject({ ...pagination, workspace: idField('workspace', 'workspace').optional() }),
      status: 200,
      response: paged(sessionView),
      async handler({ principal, query }) {
        const { sessions, total } = await identity.listEmbedSessions({
          partnerId: principal.partnerId,
          workspaceId: query.workspace ?? '',
          page: query.page,
          limit: query.limit,
        });
        return { data: sessions.map(toSessionView), page: query.page, limit: query.limit, total };
      },
    }),
    defineRoute({
      method: 'DELETE',
      url: '/v1/embed-sessions/:id',
      summary: 'End an embed session: its token stops working at once and its open streams close',
      permission: 'partnerOnly',
      params: z.strictObject({ id: pathId('embedSession', 'embed session') }),
      status: 204,
      async handler({ principal, params }) {
        await identity.endEmbedSession({ partnerId: principal.partnerId, sessionId: params.id });
      },
    }),
  ];
}
