import type { IncomingMessage, Server, ServerResponse } from 'node:http';
import { type Carrier, type Span, SpanKind, SpanStatusCode, startSpan, withTraceContext } from '@svc/logging';
import type { FastifyInstance, FastifyRequest } from 'fastify';

/**
 * With tracing on, every request to the gateway is a server span, the root of what it causes in
 * the other services (gRPC calls, outbox events, jobs). The span starts where Node hands the
 * request over, so everything Fastify runs for it (hooks, handler, gRPC clients) runs inside its
 * context; it is named after the route template once routing is done (`POST /v1/posts`, never a
 * raw path, so names stay few) and ends when the response is closed, with its status. A caller's
 * `traceparent` is honoured, so a partner's own trace continues here.
 */
export function traceRequests(app: FastifyInstance): void {
  const spans = new WeakMap<IncomingMessage, Span>();
  wrapRequestListener(app.server, (request, response, handle) => {
    const started = startSpan(request.method ?? 'HTTP', {
      kind: SpanKind.SERVER,
      carrier: headersCarrier(request),
      attributes: { 'http.request.method': request.method ?? '' },
    });
    if (!started) return handle();
    spans.set(request, started.span);
    response.once('close', () => endSpan(started.span, response));
    withTraceContext(started.context, handle);
  });
  app.addHook('onRequest', async (request) => nameSpan(spans.get(request.raw), request));
}

type Listener = (request: IncomingMessage, response: ServerResponse) => void;

/** Runs Fastify's own request listener through `around` (its options stay as Fastify set them). */
function wrapRequestListener(
  server: Server,
  around: (request: IncomingMessage, response: ServerResponse, handle: () => void) => void,
): void {
  const listeners = server.listeners('request') as Listener[];
  server.removeAllListeners('request');
  for (const listener of listeners) {
    server.on('request', (request: IncomingMessage, response: ServerResponse) =>
      around(request, response, () => listener(request, response)),
    );
  }
}

function nameSpan(span: Span | undefined, request: FastifyRequest): void {
  const route = request.routeOptions.url;
  if (!span || !route) return;
  span.updateName(`${request.method} ${route}`);
  span.setAttribute('http.route', route);
}

function endSpan(span: Span, response: ServerResponse): void {
  span.setAttribute('http.response.status_code', response.statusCode);
  // A 4xx is the caller's fault, not the server's: only a 5xx marks the span failed.
  if (response.statusCode >= 500) span.setStatus({ code: SpanStatusCode.ERROR });
  span.end();
}

function headersCarrier(request: IncomingMessage): Carrier {
  return {
    get: (key) => {
      const value = request.headers[key];
      return Array.isArray(value) ? value[0] : value;
    },
    set: () => {},
  };
}
