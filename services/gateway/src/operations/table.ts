import type { ServiceClients } from '../clients.ts';
import type { GatewayConfig } from '../config.ts';
import type { EmbedStreams } from '../embed/event-streams.ts';
import { widgetRoutes } from '../embed/widget-route.ts';
import { accountOperations } from './accounts.ts';
import { conversationOperations } from './conversations.ts';
import { embedOperations } from './embed.ts';
import { embedSessionOperations } from './embed-sessions.ts';
import { eventOperations } from './events.ts';
import { keyOperations } from './keys.ts';
import { mediaOperations } from './media.ts';
import type { AnyOperation } from './operation.ts';
import { postOperations } from './posts.ts';
import { webhookOperations } from './webhook.ts';
import { workspaceOperations } from './workspaces.ts';

type UploadConfig = Pick<
  GatewayConfig,
  'MEDIA_MAX_BYTES' | 'MEDIA_VIDEO_MAX_BYTES' | 'MEDIA_UPLOADS_PER_PARTNER' | 'MEDIA_UPLOADS_TOTAL'
>;

/**
 * Every operation of the public API, declared once, one file per noun. The REST routes, the
 * widget's routes and the MCP tools are all derived from this table. `config` carries the upload
 * limits (their defaults apply when left out, as in the matrix test); `streams` serves the
 * widget's event stream (left out where operations are only listed).
 */
export function operationTable(
  clients: ServiceClients,
  config?: UploadConfig,
  streams?: EmbedStreams,
): AnyOperation[] {
  return [
    ...workspaceOperations(clients.identity),
    ...keyOperations(clients.identity),
    ...accountOperations(clients.accounts),
    ...mediaOperations(
      clients.publishing,
      config && {
        maxBytes: config.MEDIA_MAX_BYTES,
        videoMaxBytes: config.MEDIA_VIDEO_MAX_BYTES,
        perPartner: config.MEDIA_UPLOADS_PER_PARTNER,
        total: config.MEDIA_UPLOADS_TOTAL,
      },
    ),
    ...postOperations(clients.publishing),
    ...conversationOperations(clients.inbox),
    ...webhookOperations(clients.webhooks),
    ...eventOperations(clients.webhooks),
    ...embedSessionOperations(clients.identity),
    ...embedOperations(clients, streams),
  ];
}

/** The HTTP routes of the table: each operation at its REST path, and the widget's versions. */
export function httpRoutes(operations: AnyOperation[]): AnyOperation[] {
  return [...operations, ...widgetRoutes(operations)];
}
