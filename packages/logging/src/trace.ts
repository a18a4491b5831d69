import {
  type Attributes,
  type Context,
  context,
  propagation,
  type Span,
  SpanKind,
  SpanStatusCode,
  type TextMapGetter,
  type TextMapSetter,
  trace,
} from '@opentelemetry/api';

/**
 * The thin hooks that follow one request across services with OpenTelemetry: a span per gateway
 * request, per gRPC call on both sides, per NATS message consumed, and the W3C trace context
 * (`traceparent`) carried in gRPC metadata, outbox rows and NATS headers. They use only
 * `@opentelemetry/api`; the SDK is registered by the runtime when tracing is configured
 * (packages/ops/src/tracing.ts). Until then every hook returns at its first line, so tracing off
 * costs one boolean test per call, not a no-op span and a context switch.
 */
let enabled = false;

/** Called once an SDK (tracer provider, context manager, W3C propagator) is registered. */
export function enableTracing(): void {
  enabled = true;
}

/** Called when the SDK is shut down: the hooks return at once again. */
export function disableTracing(): void {
  enabled = false;
}

export function tracingEnabled(): boolean {
  return enabled;
}

export type { Context as TraceContext, Span };
export { SpanKind, SpanStatusCode };

/** How a hook reads and writes a carrier (NATS headers, gRPC metadata): one value per key. */
export interface Carrier {
  get(key: string): string | undefined;
  set(key: string, value: string): void;
}

const getter: TextMapGetter<Carrier> = { get: (carrier, key) => carrier.get(key), keys: () => [] };
const setter: TextMapSetter<Carrier> = { set: (carrier, key, value) => carrier.set(key, value) };

const tracer = () => trace.getTracer('svc');

/** Writes the trace context of `from` (default: the active span) into the carrier; off: nothing. */
export function injectTraceContext(carrier: Carrier, from?: Context): void {
  if (enabled) propagation.inject(from ?? context.active(), carrier, setter);
}

/** The `traceparent` of the active span, or undefined (tracing off, no span). */
export function currentTraceparent(): string | undefined {
  if (!enabled) return undefined;
  const record: Record<string, string | undefined> = {};
  injectTraceContext(recordCarrier(record));
  return record.traceparent;
}

/** A carrier over a plain record (headers already read into an object). */
export function recordCarrier(record: Record<string, string | undefined>): Carrier {
  return {
    get: (key) => record[key],
    set: (key, value) => {
      record[key] = value;
    },
  };
}

export interface SpanStart {
  kind: SpanKind;
  attributes?: Attributes;
  /** The caller's trace context, read from what the request or message carried. */
  carrier?: Carrier;
}

/**
 * Runs `work` inside a new span, the child of the trace context the carrier holds (else of the
 * active span), and ends it with `work`'s outcome: a thrown error marks it failed. Off: `work()`.
 */
export function inSpan<T>(name: string, start: SpanStart, work: (span?: Span) => Promise<T>): Promise<T> {
  if (!enabled) return work();
  const parent = start.carrier
    ? propagation.extract(context.active(), start.carrier, getter)
    : context.active();
  const span = tracer().startSpan(name, { kind: start.kind, attributes: start.attributes }, parent);
  return context.with(trace.setSpan(parent, span), async () => {
    try {
      return await work(span);
    } catch (error) {
      failSpan(span, error);
      throw error;
    } finally {
      span.end();
    }
  });
}

/**
 * Starts a span that the caller ends (a request whose end is an event, a message stored in a
 * later batch) and answers it with the context to run its work in; off: undefined.
 */
export function startSpan(name: string, start: SpanStart): { span: Span; context: Context } | undefined {
  if (!enabled) return undefined;
  const parent = start.carrier
    ? propagation.extract(context.active(), start.carrier, getter)
    : context.active();
  const span = tracer().startSpan(name, { kind: start.kind, attributes: start.attributes }, parent);
  return { span, context: trace.setSpan(parent, span) };
}

/** Runs `fn` with `ctx` as the active trace context (from startSpan); without one, just `fn()`. */
export function withTraceContext<T>(ctx: Context | undefined, fn: () => T): T {
  return ctx ? context.with(ctx, fn) : fn();
}

/** Marks a span failed with the error (its message and type; never a payload). */
export function failSpan(span: Span, error: unknown): void {
  span.recordException(error instanceof Error ? error : String(error));
  span.setStatus({ code: SpanStatusCode.ERROR, message: error instanceof Error ? error.message : undefined });
}

/** The active span's ids, for log lines. */
export function traceIds(): { trace_id?: string; span_id?: string } {
  const span = trace.getActiveSpan()?.spanContext();
  return span ? { trace_id: span.traceId, span_id: span.spanId } : {};
}
