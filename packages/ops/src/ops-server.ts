import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import type { Logger } from '@svc/logging';
import { collectDefaultMetrics, Registry } from 'prom-client';

/**
 * Every service's operations port (architecture rule 9): `/healthz` (the process is alive),
 * `/readyz` (each dependency answers: database, NATS, Redis...) and `/metrics` (Prometheus text).
 * A small node:http server, apart from the service's gRPC or public port, so probes and scrapes
 * never queue behind product traffic.
 */
export type ReadinessCheck = () => Promise<unknown>;

export interface OpsServer {
  port: number;
  registry: Registry;
  close(): Promise<void>;
}

const CHECK_TIMEOUT_MS = 2_000;

export async function startOpsServer(options: {
  service: string;
  port: number;
  host?: string;
  checks: Record<string, ReadinessCheck>;
  logger: Logger;
  registry?: Registry;
  /** True once the service is stopping: `/readyz` then answers 503 without running the checks. */
  stopping?: () => boolean;
}): Promise<OpsServer> {
  const registry = options.registry ?? new Registry();
  registry.setDefaultLabels({ service: options.service });
  collectDefaultMetrics({ register: registry });
  const server: Server = createServer((request, response) => {
    const path = (request.url ?? '/').split('?')[0];
    const send = (status: number, type: string, body: string) =>
      response.writeHead(status, { 'content-type': type }).end(body);
    if (path === '/healthz') return send(200, 'application/json', '{"status":"ok"}');
    if (path === '/readyz') {
      if (options.stopping?.()) return send(503, 'application/json', '{"status":"stopping","checks":{}}');
      void readiness(options.checks).then(({ ready, checks }) =>
        send(
          ready ? 200 : 503,
          'application/json',
          JSON.stringify({ status: ready ? 'ok' : 'unavailable', checks }),
        ),
      );
      return;
    }
    if (path === '/metrics') {
      void registry.metrics().then((text) => send(200, registry.contentType, text));
      return;
    }
    send(404, 'application/json', '{"status":"not found"}');
  });
  await new Promise<void>((resolve) => server.listen(options.port, options.host ?? '127.0.0.1', resolve));
  const port = (server.address() as AddressInfo).port;
  options.logger.info({ port }, 'health and metrics listening');
  return {
    port,
    registry,
    close: () => new Promise((resolve) => server.close(() => resolve())),
  };
}

/** Runs every check with a deadline; a check that throws or hangs marks the service not ready. */
export async function readiness(
  checks: Record<string, ReadinessCheck>,
): Promise<{ ready: boolean; checks: Record<string, string> }> {
  const results = await Promise.all(
    Object.entries(checks).map(async ([name, check]) => {
      try {
        await withDeadline(check(), CHECK_TIMEOUT_MS);
        return [name, 'ok'] as const;
      } catch (error) {
        return [name, `failing: ${(error as Error).message}`] as const;
      }
    }),
  );
  return { ready: results.every(([, state]) => state === 'ok'), checks: Object.fromEntries(results) };
}

function withDeadline<T>(promise: Promise<T>, ms: number): Promise<T> {
  let timer: NodeJS.Timeout | undefined;
  const deadline = new Promise<never>((_, reject) => {
    timer = setTimeout(() => reject(new Error(`no answer within ${ms} ms`)), ms);
  });
  return Promise.race([promise, deadline]).finally(() => clearTimeout(timer));
}
