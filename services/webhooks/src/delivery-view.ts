import type { DeliveryAttemptPageView, DeliveryAttemptView, RedeliveryView } from '@svc/contracts/public';

/** What an attempt's view needs: a stored attempt row, or the record of one just made. */
export interface AttemptFields {
  id: string;
  eventId: string;
  number: number;
  url: string;
  attemptedAt: Date;
  statusCode: number | null;
  error: string | null;
  latencyMs: number;
  succeeded: boolean;
}

/** The attempt as partners see it (`DeliveryAttemptView`): the only place an attempt becomes it. */
export function viewOfAttempt(a: AttemptFields): DeliveryAttemptView {
  return {
    id: a.id,
    event_id: a.eventId,
    number: a.number,
    url: a.url,
    attempted_at: a.attemptedAt.toISOString(),
    status_code: a.statusCode,
    error: a.error || null,
    latency_ms: a.latencyMs,
    succeeded: a.succeeded,
  };
}

/** A page of an event's attempts with where its delivery stands (none: never scheduled). */
export function viewOfAttemptPage(
  attempts: AttemptFields[],
  window: { page: number; limit: number; total: number },
  delivery: { state: string; nextAttemptAt: Date | null } | null,
): DeliveryAttemptPageView {
  return {
    data: attempts.map(viewOfAttempt),
    page: window.page,
    limit: window.limit,
    total: window.total,
    state: (delivery?.state || null) as DeliveryAttemptPageView['state'],
    next_attempt_at: delivery?.nextAttemptAt?.toISOString() ?? null,
  };
}

/** The answer to a redelivery: the event's delivery as it now stands. */
export function viewOfRedelivery(eventId: string, state: string, nextAttemptAt: Date): RedeliveryView {
  return {
    event_id: eventId,
    state: state as RedeliveryView['state'],
    next_attempt_at: nextAttemptAt.toISOString(),
  };
}
