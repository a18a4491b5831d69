import type * as grpc from '@grpc/grpc-js';
import { type Carrier, failSpan, type Span, type SpanKind, type SpanStart } from '@svc/logging';

/**
 * What tracing needs from a gRPC call (packages/logging/src/trace.ts): the span's start (its kind
 * and the call's `rpc.*` attributes, built once per method) and the metadata as the carrier of
 * the W3C trace context (`traceparent` goes out with the call, the server reads it back).
 */
export function rpcSpanStart(kind: SpanKind, serviceName: string, methodName: string): SpanStart {
  return {
    kind,
    attributes: { 'rpc.system': 'grpc', 'rpc.service': serviceName, 'rpc.method': methodName },
  };
}

export function metadataCarrier(metadata: grpc.Metadata): Carrier {
  return {
    get: (key) => {
      const value = metadata.get(key)[0];
      return value === undefined ? undefined : String(value);
    },
    set: (key, value) => metadata.set(key, value),
  };
}

/** The codes that mean the server failed (not the caller): they mark a server span failed. */
const SERVER_FAULTS = new Set([2, 4, 12, 13, 14, 15]);

/** Records a server call's status code on its span; a server fault marks it failed. */
export function endServerSpan(span: Span | undefined, code: grpc.status, error?: unknown): void {
  if (!span) return;
  span.setAttribute('rpc.grpc.status_code', code);
  if (SERVER_FAULTS.has(code)) failSpan(span, error);
}
