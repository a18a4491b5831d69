import type { JsMsg } from '@nats-io/jetstream';
import { type MsgHdrs, headers as natsHeaders } from '@nats-io/nats-core';
import {
  type Carrier,
  currentRequestId,
  currentTraceparent,
  injectTraceContext,
  inSpan,
  recordCarrier,
  SpanKind,
  type SpanStart,
  tracingEnabled,
} from '@svc/logging';
import type { DurableConsumer } from './catalog.ts';

/**
 * How a unit of work follows its messages: the request id as `X-Request-Id` and, with tracing on,
 * the W3C trace context as `traceparent` (packages/logging/src/trace.ts). An outbox row keeps
 * both in its `request_id` column, the trace context after a space (a request id never holds one:
 * see saneRequestId), so carrying the trace through the outbox needs no new column.
 */
export const REQUEST_ID = 'X-Request-Id';
const TRACEPARENT = 'traceparent';

function headersCarrier(h: MsgHdrs): Carrier {
  return { get: (key) => h.get(key) || undefined, set: (key, value) => h.set(key, value) };
}

/** Headers for a message published now: the current request id and trace context. */
export function currentHeaders(): MsgHdrs {
  const h = natsHeaders();
  const requestId = currentRequestId();
  if (requestId) h.set(REQUEST_ID, requestId);
  if (tracingEnabled()) injectTraceContext(headersCarrier(h));
  return h;
}

/** Copies the request id and trace context of a message onto another (a dead letter, a replay). */
export function copyRequestHeaders(from: MsgHdrs | undefined, to: MsgHdrs): void {
  for (const name of [REQUEST_ID, TRACEPARENT]) {
    const value = from?.get(name);
    if (value) to.set(name, value);
  }
}

/** The `request_id` column of an outbox row written now. */
export function requestColumn(): string | null {
  const requestId = currentRequestId() ?? null;
  const traceparent = currentTraceparent();
  return traceparent ? `${requestId ?? ''} ${traceparent}` : requestId;
}

/**
 * Publishes an outbox row's message with its request id and, if the row carries a trace context,
 * within a producer span (child of the span that wrote the row) whose context the message takes.
 */
export function publishWithRequestColumn(
  column: string | null,
  subject: string,
  publish: (h: MsgHdrs) => Promise<unknown>,
): Promise<unknown> {
  const h = natsHeaders();
  const [requestId, traceparent] = (column ?? '').split(' ', 2);
  if (requestId) h.set(REQUEST_ID, requestId);
  if (!traceparent || !tracingEnabled()) return publish(h);
  const start: SpanStart = {
    kind: SpanKind.PRODUCER,
    carrier: recordCarrier({ traceparent }),
    attributes: { 'messaging.system': 'nats', 'messaging.destination.name': subject },
  };
  return inSpan(`send ${subject}`, start, () => {
    injectTraceContext(headersCarrier(h));
    return publish(h);
  });
}

/** A consumer's span: its name and attributes, built once per consumer. */
export function consumerSpan(consumer: DurableConsumer<unknown>): { name: string; start: SpanStart } {
  return {
    name: `process ${consumer.subject.name}`,
    start: {
      kind: SpanKind.CONSUMER,
      attributes: {
        'messaging.system': 'nats',
        'messaging.destination.name': consumer.subject.name,
        'messaging.consumer.group.name': consumer.durable,
      },
    },
  };
}

/** The span start of one message: the child of the trace context it carries, if any. */
export function carriedBy(start: SpanStart, message: JsMsg): SpanStart {
  return tracingEnabled() && message.headers ? { ...start, carrier: headersCarrier(message.headers) } : start;
}
