import { Counter, Histogram, type Registry } from 'prom-client';
import { CallMetrics } from './call-metrics.ts';

/** One finished gRPC call as the server saw it: `Package.Service/Method` and the status name. */
export interface GrpcCall {
  method: string;
  code: string;
  seconds: number;
}

/**
 * Server-side gRPC metrics: calls by method and status code, and their duration by method.
 * Labels are bounded by the proto files (methods) and gRPC's 17 status codes, never by requests.
 */
export function grpcServerMetrics(registry: Registry): (call: GrpcCall) => void {
  const handled = new Counter({
    name: 'grpc_server_handled_total',
    help: 'gRPC calls answered by this server, by method and status code',
    labelNames: ['method', 'code'],
    registers: [registry],
  });
  const duration = new Histogram({
    name: 'grpc_server_handling_seconds',
    help: 'Time from a call arriving to its answer, by method',
    labelNames: ['method'],
    buckets: [0.001, 0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 10],
    registers: [registry],
  });
  const calls = new CallMetrics(handled, duration);
  return ({ method, code, seconds }) =>
    calls.observe(`${method} ${code}`, () => ({ counted: { method, code }, timed: { method } }), seconds);
}
