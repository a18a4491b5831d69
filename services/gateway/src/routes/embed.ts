import { network } from '@svc/contracts/public';
import { ServiceError } from '@svc/errors';
import { z } from 'zod';
import { bearerHash } from '../auth/authenticate.ts';
import { grpcCaller } from '../auth/principal.ts';
import type { ServiceClients } from '../clients.ts';
import type { EmbedStreams } from '../embed/event-streams.ts';
import { restRoute, widgetVersion } from '../embed/widget-route.ts';
import { type AnyRoute, defineRoute } from '../http/route.ts';
import { timestamp } from '../http/schemas.ts';
import { surface } from './embed-sessions.ts';

/** How long the widget's popup has to finish the network's consent (never past the session's end). */
const CONNECT_LINK_TTL_S = 900;

/**
 * The widget's API (`/v1/embed/*`, embed sessions only). Every call except the session, connect
 * and stream routes is the widget's version of a REST route (same schemas, handler and gRPC
 * call), scoped to the session's workspace and to the surfaces it was granted.
 */
export function embedRoutes(rest: AnyRoute[], clients: ServiceClients, streams?: EmbedStreams): AnyRoute[] {
  const from = (name: string) => restRoute(rest, name);
  return [
    sessionRoute(clients),
    streamRoute(streams),
    // connect
    widgetVersion(from('GET /v1/workspaces/:id/accounts'), {
      url: '/v1/embed/accounts',
      permission: 'embedConnect',
      workspaceIn: 'params',
    }),
    connectRoute(clients),
    widgetVersion(from('DELETE /v1/accounts/:id'), {
      url: '/v1/embed/accounts/:id',
      permission: 'embedConnect',
    }),
    // inbox
    widgetVersion(from('GET /v1/conversations'), {
      url: '/v1/embed/conversations',
      permission: 'embedInbox',
      workspaceIn: 'query',
    }),
    widgetVersion(from('GET /v1/conversations/:id'), {
      url: '/v1/embed/conversations/:id',
      permission: 'embedInbox',
    }),
    widgetVersion(from('PATCH /v1/conversations/:id'), {
      url: '/v1/embed/conversations/:id',
      permission: 'embedInbox',
    }),
    widgetVersion(from('GET /v1/conversations/:id/messages'), {
      url: '/v1/embed/conversations/:id/messages',
      permission: 'embedInbox',
    }),
    widgetVersion(from('POST /v1/conversations/:id/messages'), {
      url: '/v1/embed/conversations/:id/messages',
      permission: 'embedInbox',
    }),
    widgetVersion(from('POST /v1/messages/:id/private-reply'), {
      url: '/v1/embed/messages/:id/private-reply',
      permission: 'embedInbox',
    }),
    // publish
    widgetVersion(from('POST /v1/media'), {
      url: '/v1/embed/media',
      permission: 'embedPublish',
      workspaceIn: 'body',
    }),
    widgetVersion(from('POST /v1/posts'), {
      url: '/v1/embed/posts',
      permission: 'embedPublish',
      workspaceIn: 'body',
    }),
    widgetVersion(from('GET /v1/posts'), {
      url: '/v1/embed/posts',
      permission: 'embedPublish',
      workspaceIn: 'query',
    }),
  ];
}

function sessionRoute({ identity }: ServiceClients): AnyRoute {
  return defineRoute({
    method: 'GET',
    url: '/v1/embed/session',
    summary: 'What this embed session may do: its surfaces, its workspace and its expiry',
    permission: 'embed',
    status: 200,
    response: z.object({
      id: z.string(),
      workspace: z.object({ id: z.string(), name: z.string() }),
      surfaces: z.array(surface),
      expires_at: timestamp,
    }),
    async handler({ principal }) {
      const { workspace } = await identity.getWorkspace({
        partnerId: principal.partnerId,
        workspaceId: principal.workspaceId ?? '',
      });
      return {
        id: principal.keyId,
        workspace: { id: principal.workspaceId, name: workspace?.name ?? '' },
        surfaces: principal.embed?.surfaces ?? [],
        expires_at: new Date(principal.embed?.expiresAtMs ?? 0).toISOString(),
      };
    },
  });
}

function connectRoute({ accounts }: ServiceClients): AnyRoute {
  return defineRoute({
    method: 'POST',
    url: '/v1/embed/connect',
    summary:
      "Start connecting an account: answers the URL the widget's popup opens (the network's consent); the result arrives on the stream as account.connected",
    permission: 'embedConnect',
    body: z.strictObject({ network }),
    status: 201,
    response: z.object({ url: z.string().describe('open it in a popup started by a click') }),
    async handler({ principal, body }) {
      // Bound to the session (the key id is the session's id): the link lives no longer than the
      // session, and ending the session ends it.
      const { link } = await accounts.createConnectLink({
        caller: grpcCaller(principal),
        workspaceId: principal.workspaceId ?? '',
        networks: [body.network],
        expiresInSeconds: CONNECT_LINK_TTL_S,
        embedSessionId: principal.keyId,
      });
      if (!link) throw new Error('accounts returned no link');
      return { url: `${link.url}/${encodeURIComponent(body.network)}/start` };
    },
  });
}

function streamRoute(streams: EmbedStreams | undefined): AnyRoute {
  return defineRoute({
    method: 'GET',
    url: '/v1/embed/stream',
    summary:
      "Server-Sent Events of the session's workspace: message.received, message.sent, message.updated, comment.received, account.connected, account.disconnected, account.expired, account.changed, post.* (for the surfaces granted); a comment line every 15 s; ends with session.expired. Read it with fetch() and the Authorization header (never put the token in the URL).",
    permission: 'embed',
    status: 200,
    streams: true,
    async handler({ principal, request, reply }) {
      if (!streams) throw new ServiceError('service_unavailable', 'event streams are not running');
      const stream = await streams.open(principal, bearerHash(request.headers.authorization));
      reply.header('Content-Type', 'text/event-stream; charset=utf-8');
      reply.header('Cache-Control', 'no-store');
      reply.header('X-Accel-Buffering', 'no');
      // The connection ends with the stream: left open for keep-alive, it would hold a stopping
      // gateway's close until the keep-alive timeout.
      reply.header('Connection', 'close');
      return stream;
    },
  });
}
