import { createdEmbedSessionView, embedSessionView, embedSurface } from '@svc/contracts/public';
import { z } from 'zod';
import type { IdentityClient } from '../clients.ts';
import { jsonText, pagedJsonText } from '../http/json-text.ts';
import { idField, paged, pagination, pathId } from '../http/schemas.ts';
import { type AnyOperation, defineOperation } from './operation.ts';

/** The widget surfaces a session may be granted (the embed door's session answer lists them too). */

/**
 * Embed sessions, minted by the partner's server for its page's widget (partner key only). The
 * token is in the creation answer only; identity keeps its SHA-256.
 */
export function embedSessionOperations(identity: IdentityClient): AnyOperation[] {
  return [
    defineOperation({
      method: 'POST',
      url: '/v1/embed-sessions',
      summary:
        'Mint an embed session for the widget: a short-lived sve_ token for one workspace (in this response only)',
      permission: 'partnerOnly',
      body: z.strictObject({
        workspace: idField('workspace', 'workspace'),
        surfaces: z
          .array(embedSurface)
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
      response: createdEmbedSessionView,
      async run({ principal, body }) {
        const { sessionJson } = await identity.createEmbedSession({
          partnerId: principal.partnerId,
          workspaceId: body.workspace,
          surfaces: body.surfaces ?? [],
          allowedOrigins: body.allowed_origins,
          expiresInSeconds: body.expires_in ?? 0,
        });
        return jsonText(sessionJson);
      },
    }),
    defineOperation({
      method: 'GET',
      url: '/v1/embed-sessions',
      summary: 'List the live embed sessions (never their tokens), oldest first',
      permission: 'partnerOnly',
      query: z.strictObject({ ...pagination, workspace: idField('workspace', 'workspace').optional() }),
      status: 200,
      response: paged(embedSessionView),
      async run({ principal, query }) {
        const { sessionsJson, total } = await identity.listEmbedSessions({
          partnerId: principal.partnerId,
          workspaceId: query.workspace ?? '',
          page: query.page,
          limit: query.limit,
        });
        return pagedJsonText(sessionsJson, query.page, query.limit, total);
      },
    }),
    defineOperation({
      method: 'DELETE',
      url: '/v1/embed-sessions/:id',
      summary: 'End an embed session: its token stops working at once and its open streams close',
      permission: 'partnerOnly',
      params: z.strictObject({ id: pathId('embedSession', 'embed session') }),
      status: 204,
      async run({ principal, params }) {
        await identity.endEmbedSession({ partnerId: principal.partnerId, sessionId: params.id });
      },
    }),
  ];
}
