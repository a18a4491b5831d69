import {
  deliveryAttemptPageView,
  EVENT_DATA,
  type EventType,
  eventEnvelope,
  redeliveryView,
} from '@svc/contracts/public';
import { z } from 'zod';
import type { WebhooksClient } from '../clients.ts';
import { jsonText, pagedJsonText } from '../http/json-text.ts';
import { idField, paged, pageQuery, pagination, pathId } from '../http/schemas.ts';
import { type AnyOperation, defineOperation } from './operation.ts';

/** The event types of spec section 6: a filter on anything else is a mistake worth a 400. */
const EVENT_TYPES = Object.keys(EVENT_DATA) as [EventType, ...EventType[]];

const eventView = eventEnvelope.meta({ id: 'Event' });

const eventIdParams = z.strictObject({ id: pathId('event', 'event') });

const eventListQuery = z.strictObject({
  ...pagination,
  workspace: idField('workspace', 'workspace').optional(),
  type: z.enum(EVENT_TYPES).optional().describe('one event type'),
  since: z.iso.datetime({ offset: true }).optional().describe('events created after this instant'),
});

export function eventOperations(webhooks: WebhooksClient): AnyOperation[] {
  return [
    defineOperation({
      method: 'GET',
      url: '/v1/events',
      summary: 'List events, oldest first; each item is exactly the body a webhook delivery carries',
      permission: 'partnerOnly',
      query: eventListQuery,
      workspaceIn: 'query',
      status: 200,
      response: paged(eventView),
      tools: [
        {
          name: 'list_events',
          title: 'List events',
          description:
            'List the events of this workspace, oldest first (post.published, message.received, account.connected...); each is the body a webhook delivery carries. Partner keys only, as GET /v1/events.',
          readOnly: true,
        },
      ],
      async run({ principal, query }) {
        // Each event is the stored text a webhook delivery carries, passed through as it is.
        const { eventsJson, total } = await webhooks.listEvents({
          partnerSlug: principal.partnerSlug,
          workspaceId: query.workspace,
          type: query.type,
          since: query.since,
          page: query.page,
          limit: query.limit,
        });
        return pagedJsonText(eventsJson, query.page, query.limit, total);
      },
    }),
    defineOperation({
      method: 'GET',
      url: '/v1/events/:id/deliveries',
      summary: 'List the delivery attempts of an event, with its delivery state',
      permission: 'partnerOnly',
      params: eventIdParams,
      query: pageQuery,
      status: 200,
      response: deliveryAttemptPageView,
      async run({ principal, params, query }) {
        const { pageJson } = await webhooks.listDeliveryAttempts({
          partnerSlug: principal.partnerSlug,
          eventId: params.id,
          page: query.page,
          limit: query.limit,
        });
        return jsonText(pageJson);
      },
    }),
    defineOperation({
      method: 'POST',
      url: '/v1/events/:id/redeliver',
      summary:
        'Attempt delivery now: one fresh attempt of a delivered or undelivered event, or the scheduled retry of a pending one brought forward (409 only while an attempt is in flight)',
      permission: 'partnerOnly',
      params: eventIdParams,
      status: 200,
      response: redeliveryView,
      async run({ principal, params }) {
        const { redeliveryJson } = await webhooks.redeliverEvent({
          partnerId: principal.partnerId,
          partnerSlug: principal.partnerSlug,
          eventId: params.id,
        });
        return jsonText(redeliveryJson);
      },
    }),
  ];
}
