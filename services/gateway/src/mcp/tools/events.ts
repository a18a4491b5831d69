import { errors } from '@svc/errors';
import type { ServiceClients } from '../../clients.ts';
import { paged } from '../../http/schemas.ts';
import { eventListQuery, eventView, listEvents } from '../../routes/events.ts';
import { type AnyTool, defineTool } from '../tool.ts';

/** The partner's events of this workspace, as `GET /v1/events` lists them. */
export function eventTools(clients: ServiceClients): AnyTool[] {
  return [
    defineTool({
      name: 'list_events',
      title: 'List events',
      description:
        'List the events of this workspace, oldest first (post.published, message.received, account.connected...); each is the body a webhook delivery carries. Partner keys only, as GET /v1/events.',
      input: eventListQuery.omit({ workspace: true }),
      output: paged(eventView),
      readOnly: true,
      run({ caller, args }) {
        // The permission matrix: a workspace key cannot list events (spec 4, GET /events).
        if (caller.key.kind !== 'partner') throw errors.forbidden('a workspace key cannot list events');
        return listEvents(clients.webhooks, caller.key.partnerSlug, {
          ...args,
          workspace: caller.workspaceId,
        });
      },
    }),
  ];
}
