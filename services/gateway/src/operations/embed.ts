import { embedSurface, network, type WorkspaceView } from '@svc/contracts/public';
import { ServiceError } from '@svc/errors';
import { z } from 'zod';
import { bearerHash } from '../auth/authenticate.ts';
import { grpcCaller } from '../auth/principal.ts';
import type { ServiceClients } from '../clients.ts';
import type { EmbedStreams } from '../embed/event-streams.ts';
import { timestamp } from '../http/schemas.ts';
import { type AnyOperation, defineOperation } from './operation.ts';

/** How long the widget's popup has to finish the network's consent (never past the session's end). */
const CONNECT_LINK_TTL_S = 900;

/**
 * The operations only the widget has (`/v1/embed/*`, embed sessions only): what the session may
 * do, starting a connection, the event stream. The rest of the widget's API is the widget's
 * version of REST operations (their `widget` door).
 */
export function embedOperations(clients: ServiceClients, streams?: EmbedStreams): AnyOperation[] {
  return [sessionOperation(clients), streamOperation(streams), connectOperation(clients)];
}

function sessionOperation({ identity }: ServiceClients): AnyOperation {
  return defineOperation({
    method: 'GET',
    url: '/v1/embed/session',
    summary: 'What this embed session may do: its surfaces, its workspace and its expiry',
    permission: 'embed',
    status: 200,
    response: z.object({
      id: z.string(),
      workspace: z.object({ id: z.string(), name: z.string() }),
      surfaces: z.array(embedSurface),
      expires_at: timestamp,
    }),
    async run({ principal }) {
      const { workspaceJson } = await identity.getWorkspace({
        partnerId: principal.partnerId,
        workspaceId: principal.workspaceId ?? '',
      });
      const workspace = JSON.parse(workspaceJson) as WorkspaceView;
      return {
        id: principal.keyId,
        workspace: { id: principal.workspaceId, name: workspace.name },
        surfaces: principal.embed?.surfaces ?? [],
        expires_at: new Date(principal.embed?.expiresAtMs ?? 0).toISOString(),
      };
    },
  });
}

function connectOperation({ accounts }: ServiceClients): AnyOperation {
  return defineOperation({
    method: 'POST',
    url: '/v1/embed/connect',
    summary:
      "Start connecting an account: answers the URL the widget's popup opens (the network's consent); the result arrives on the stream as account.connected",
    permission: 'embedConnect',
    body: z.strictObject({ network }),
    status: 201,
    response: z.object({ url: z.string().describe('open it in a popup started by a click') }),
    async run({ principal, body }) {
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

function streamOperation(streams: EmbedStreams | undefined): AnyOperation {
  return defineOperation({
    method: 'GET',
    url: '/v1/embed/stream',
    summary:
      "Server-Sent Events of the session's workspace: message.received, message.sent, message.updated, comment.received, account.connected, account.disconnected, account.expired, account.changed, post.* (for the surfaces granted); a comment line every 15 s; ends with session.expired. Read it with fetch() and the Authorization header (never put the token in the URL).",
    permission: 'embed',
    status: 200,
    streams: true,
    async run({ principal, http }) {
      if (!streams || !http) throw new ServiceError('service_unavailable', 'event streams are not running');
      const { request, reply } = http;
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
