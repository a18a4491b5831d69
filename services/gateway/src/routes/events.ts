import type { DeliveryAttempt } from '@svc/contracts';
import { EVENT_DATA, type EventType } from '@svc/contracts/public';
import { z } from 'zod';
import type { WebhooksClient } from '../clients.ts';
import { type AnyRoute, defineRoute } from '../http/route.ts';
import { idField, paged, pageQuery, pagination, pathId, timestamp } from '../http/schemas.ts';

/** The event types of spec section 6: a filter on anything else is a mistake worth a 400. */
const EVENT_TYPES = Object.keys(EVENT_DATA) as [EventType, ...EventType[]];

export const eventView = z
  .object({
    id: z.string().describe('the same on every retry; de-duplicate by it'),
    type: z.string(),
    created_at: timestamp,
    partner: z.string().describe('partner slug'),
    workspace: z.string().nullable().describe('null for ping'),
    external_id: z.string().nullable().describe("the workspace's external_id"),
    data: z.record(z.string(), z.unknown()).describe('depends on type'),
  })
  .meta({ id: 'Event' });

export const attemptView = z
  .object({
    id: z.string(),
    event_id: z.string(),
    number: z.number().int().describe('1 for the first attempt of the event'),
    url: z.string().describe('where it was sent'),
    attempted_at: timestamp,
    status_code: z.number().int().nullable().describe('null when no HTTP answer came back'),
    error: z.string().nullable().describe('why it failed; null on success'),
    latency_ms: z.number().int(),
    succeeded: z.boolean(),
  })
  .meta({ id: 'DeliveryAttempt' });

export function toAttemptView(a: DeliveryAttempt): z.infer<typeof attemptView> {
  return {
    id: a.id,
    event_id: a.eventId,
    number: a.number,
    url: a.url,
    attempted_at: a.attemptedAt,
    status_code: a.statusCode ?? null,
    error: a.error || null,
    latency_ms: a.latencyMs,
    succeeded: a.succeeded,
  };
}

const deliveryState = z.enum(['pending', 'delivered', 'undelivered']);
const eventIdParams = z.strictObject({ id: pathId('event', 'event') });

export const eventListQuery = z.strictObject({
  ...pagination,
  workspace: idField('workspace', 'workspace').optional(),
  type: z.enum(EVENT_TYPES).optional().describe('one event type'),
  since: z.iso.datetime({ offset: true }).optional().describe('events created after this instant'),
});

/** A page of the partner's events, as REST and MCP list them. */
export async function listEvents(
  webhooks: WebhooksClient,
  partnerSlug: string,
  query: z.infer<typeof eventListQuery>,
) {
  const { eventsJson, total } = await webhooks.listEvents({
    partnerSlug,
    workspaceId: query.workspace,
    type: query.type,
    since: query.since,
    page: query.page,
    limit: query.limit,
  });
  const data = eventsJson.map((body) => JSON.parse(body) as z.infer<typeof eventView>);
  return { data, page: query.page, limit: query.limit, total };
}

export function eventRoutes(webhooks: WebhooksClient): AnyRoute[] {
  return [
    defineRoute({
      method: 'GET',
      url: '/v1/events',
      summary: 'List events, oldest first; each item is exactly the body a webhook delivery carries',
      permission: 'partnerOnly',
      query: eventListQuery,
      status: 200,
      response: paged(eventView),
      handler: ({ principal, query }) => listEvents(webhooks, principal.partnerSlug, query),
    }),
    defineRoute({
      method: 'GET',
      url: '/v1/events/:id/deliveries',
      summary: 'List the delivery attempts of an event, with its delivery state',
      permission: 'partnerOnly',
      params: eventIdParams,
      query: pageQuery,
      status: 200,
      response: paged(attemptView).extend({
        state: deliveryState.nullable().describe('null when the event was never scheduled (no webhook then)'),
        next_attempt_at: timestamp.nullable().describe('not before this time, while pending'),
      }),
      async handler({ principal, params, query }) {
        const { attempts, total, state, nextAttemptAt } = await webhooks.listDeliveryAttempts({
          partnerSlug: principal.partnerSlug,
          eventId: params.id,
          page: query.page,
          limit: query.limit,
        });
        return {
          data: attempts.map(toAttemptView),
          page: query.page,
          limit: query.limit,
          total,
          state: (state || null) as z.infer<typeof deliveryState> | null,
          next_attempt_at: nextAttemptAt || null,
        };
      },
    }),
    defineRoute({
      method: 'POST',
      url: '/v1/events/:id/redeliver',
      summary:
        'Attempt delivery now: one fresh attempt of a delivered or undelivered event, or the scheduled retry of a pending one brought forward (409 only while an attempt is in flight)',
      permission: 'partnerOnly',
      params: eventIdParams,
      status: 200,
      response: z.object({ event_id: z.string(), state: deliveryState, next_attempt_at: timestamp }),
      async handler({ principal, params }) {
        const queued = await webhooks.redeliverEvent({
          partnerId: principal.partnerId,
          partnerSlug: principal.partnerSlug,
          eventId: params.id,
        });
        return {
          event_id: queued.eventId,
          state: queued.state as z.infer<typeof deliveryState>,
          next_attempt_at: queued.nextAttemptAt,
        };
      },
    }),
  ];
}
