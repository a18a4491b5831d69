import { AsyncLocalStorage } from 'node:async_hooks';
import { randomUUID } from 'node:crypto';
import pino, { type DestinationStream, type Logger } from 'pino';
import { traceIds, tracingEnabled } from './trace.ts';

export {
  type Carrier,
  currentTraceparent,
  disableTracing,
  enableTracing,
  failSpan,
  injectTraceContext,
  inSpan,
  recordCarrier,
  type Span,
  SpanKind,
  type SpanStart,
  SpanStatusCode,
  startSpan,
  type TraceContext,
  tracingEnabled,
  withTraceContext,
} from './trace.ts';
export type { Logger };

/**
 * The request id follows one unit of work through every service: the gateway takes it from
 * `X-Request-Id` (or makes one), gRPC carries it as `x-request-id` metadata and NATS as a
 * `X-Request-Id` header. Whatever runs inside `withRequestId` logs it on every line.
 */
const requestContext = new AsyncLocalStorage<{ requestId: string }>();

export const REQUEST_ID_HEADER = 'x-request-id';

export function withRequestId<T>(requestId: string, fn: () => T): T {
  return requestContext.run({ requestId }, fn);
}

/** Binds the id to the rest of the current async flow (for framework hooks that cannot wrap). */
export function enterRequestId(requestId: string): void {
  requestContext.enterWith({ requestId });
}

export function currentRequestId(): string | undefined {
  return requestContext.getStore()?.requestId;
}

export function newRequestId(): string {
  return `req_${randomUUID().replaceAll('-', '')}`;
}

/** A caller's id is kept only when it is sane: short, printable, no spaces. */
export function saneRequestId(value: unknown): string | undefined {
  return typeof value === 'string' && /^[A-Za-z0-9._:-]{1,128}$/.test(value) ? value : undefined;
}

// Anything that could hold a credential is censored even if someone logs it by mistake.
const REDACT_PATHS = [
  'authorization',
  '*.authorization',
  'headers.authorization',
  'req.headers.authorization',
  'token',
  '*.token',
  'access_token',
  '*.access_token',
  'secret',
  '*.secret',
  'key',
  '*.key',
  'password',
  '*.password',
];

export function createLogger(
  service: string,
  options: { level?: string; destination?: DestinationStream } = {},
): Logger {
  return pino(
    {
      level: options.level ?? process.env.LOG_LEVEL ?? 'info',
      base: { service },
      timestamp: pino.stdTimeFunctions.isoTime,
      redact: { paths: REDACT_PATHS, censor: '[redacted]' },
      mixin() {
        const requestId = currentRequestId();
        const ids = requestId ? { request_id: requestId } : {};
        // With tracing on, a line also names its trace, so logs and spans lead to each other.
        return tracingEnabled() ? { ...ids, ...traceIds() } : ids;
      },
    },
    options.destination,
  );
}
