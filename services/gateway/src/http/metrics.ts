import { CallMetrics, Counter, Histogram, type Registry } from '@svc/ops';
import type { FastifyReply, FastifyRequest } from 'fastify';

/**
 * The gateway's HTTP metrics on its ops port's `/metrics`: requests by method, route and status,
 * and their latency by method and route. The route is Fastify's template (`/v1/posts/:id`), or
 * `unmatched` for a path no route serves, so a client cannot add series by varying the URL.
 */
/**
 * How a fetch of a signed media URL was answered: from the copy kept after a read (`kept`), from a
 * read in flight (`shared`), by a read of its own from publishing held whole (`read`) or passed on
 * as it arrived (`streamed`: a large file, a range, HEAD, or the memory for whole reads in use).
 */
export type MediaFileAnswer = 'kept' | 'shared' | 'read' | 'streamed';

export class HttpMetrics {
  private readonly calls: CallMetrics<'method' | 'route' | 'status', 'method' | 'route'>;
  private readonly mediaFiles: Counter<'answered'>;

  constructor(registry: Registry) {
    const requests = new Counter({
      name: 'http_requests_total',
      help: 'HTTP requests answered by the gateway, by method, route template and status',
      labelNames: ['method', 'route', 'status'],
      registers: [registry],
    });
    const duration = new Histogram({
      name: 'http_request_duration_seconds',
      help: 'Time from a request arriving to its answer, by method and route template',
      labelNames: ['method', 'route'],
      buckets: [0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 5, 10, 30],
      registers: [registry],
    });
    this.calls = new CallMetrics(requests, duration);
    this.mediaFiles = new Counter({
      name: 'media_file_fetches_total',
      help: 'Fetches of signed media URLs, by how they were answered (kept, shared, read, streamed)',
      labelNames: ['answered'],
      registers: [registry],
    });
  }

  mediaFileFetch(answered: MediaFileAnswer): void {
    this.mediaFiles.inc({ answered });
  }

  observe(request: FastifyRequest, reply: FastifyReply): void {
    const route = request.routeOptions.url ?? 'unmatched';
    const { method } = request;
    const status = reply.statusCode;
    this.calls.observe(
      `${method} ${route} ${status}`,
      () => ({ counted: { method, route, status: String(status) }, timed: { method, route } }),
      reply.elapsedTime / 1000,
    );
  }
}
