import type { Bus } from '@svc/bus';
import type { WorkspaceDirectory } from '@svc/directory';
import {
  enterRequestId,
  type Logger,
  newRequestId,
  REQUEST_ID_HEADER,
  saneRequestId,
  tracingEnabled,
} from '@svc/logging';
import Fastify, {
  type FastifyBaseLogger,
  type FastifyInstance,
  LogController,
  type onRequestAsyncHookHandler,
  type onResponseAsyncHookHandler,
} from 'fastify';
import { applyLimit, authenticateRequest } from './auth/authenticate.ts';
import type { Limiter, LimitResult } from './auth/limiter.ts';
import type { Principal } from './auth/principal.ts';
import type { ServiceClients } from './clients.ts';
import type { GatewayConfig } from './config.ts';
import { CONNECT_PREFIXES, connectRoutes } from './connect/routes.ts';
import { embedAppRoutes } from './embed/app-routes.ts';
import { EmbedStreams } from './embed/event-streams.ts';
import { sessionCheck } from './embed/session-check.ts';
import { allowSessionLookupFromHosts } from './embed/session-cors.ts';
import { StreamSlots } from './embed/stream-slots.ts';
import { holdArrivalDeadlines } from './http/arrival-deadline.ts';
import { clientKey, trustProxyOption } from './http/client-address.ts';
import { earlyErrorOptions } from './http/early-errors.ts';
import { installErrorHandling } from './http/errors.ts';
import type { Idempotency } from './http/idempotency.ts';
import type { SharedFileReads } from './http/media-file-reads.ts';
import { mediaFileRoutes } from './http/media-files.ts';
import type { HttpMetrics } from './http/metrics.ts';
import type { RequestLogBuffer } from './http/request-log.ts';
import { traceRequests } from './http/request-spans.ts';
import { registerRoute } from './http/rest-route.ts';
import { admitToMcp, challengeBearer } from './mcp/auth.ts';
import { MCP_PATHS, mcpRoutes } from './mcp/server.ts';
import { DOCS_PATHS, docsRoutes } from './openapi/docs-page.ts';
import { API_VERSION, buildOpenApi } from './openapi/openapi.ts';
import { httpRoutes, operationTable } from './operations/table.ts';
import { metaWebhookRoutes } from './provider/meta-webhooks.ts';
import { tusRoutes } from './uploads/tus-routes.ts';

declare module 'fastify' {
  interface FastifyRequest {
    principal?: Principal;
    /** The key's budget as this request found it. */
    rateLimit?: LimitResult;
  }
}

export interface GatewayDeps {
  config: GatewayConfig;
  logger: Logger;
  limiter: Limiter;
  idempotency: Idempotency;
  clients: ServiceClients;
  requestLog: RequestLogBuffer;
  bus: Bus;
  /** The reads behind signed media URLs, shared and briefly kept (see media-file-reads.ts). */
  fileReads: SharedFileReads;
  /** Whose each workspace is: the MCP endpoint checks `X-Service-Workspace` against it. */
  workspaces: WorkspaceDirectory;
  /** Requests by route and status on `/metrics`; left out where no ops port serves them (unit tests). */
  metrics?: HttpMetrics;
}

const PUBLIC_PATHS = new Set(['/v1/openapi.json', ...DOCS_PATHS, '/healthz', '/readyz']);

export function buildGateway(deps: GatewayDeps): FastifyInstance {
  const { config, clients, requestLog } = deps;
  const app = Fastify({
    loggerInstance: deps.logger as FastifyBaseLogger,
    // Our onResponse hook writes one line per request (key id, route, status, duration).
    logController: new LogController({ disableRequestLogging: true }),
    // request.log is the service's logger: each line already names its request (request_id, from
    // the request's async context), so a child logger per request would only repeat it.
    childLoggerFactory: (logger) => logger,
    bodyLimit: config.BODY_LIMIT_BYTES,
    // Uploads get the longer allowance; every other request is held to REQUEST_TIMEOUT_MS below.
    requestTimeout: Math.max(config.REQUEST_TIMEOUT_MS, config.UPLOAD_TIMEOUT_MS),
    genReqId: (req) => saneRequestId(req.headers[REQUEST_ID_HEADER]) ?? newRequestId(),
    routerOptions: { ignoreTrailingSlash: true },
    // Behind a load balancer, the client's address (per-IP limits) comes from X-Forwarded-For, as
    // far as the configured proxies vouch for it.
    trustProxy: trustProxyOption(config.TRUST_PROXY),
    // While it drains at stop, a request that comes on a kept-alive connection is served like the
    // ones in flight, not refused with Fastify's bare 503 (no error envelope); /readyz already
    // sends new traffic elsewhere (seen in the fault suite's SIGTERM of a gateway replica).
    return503OnClosing: false,
    ...earlyErrorOptions,
  });
  installErrorHandling(app);
  app.server.headersTimeout = config.REQUEST_TIMEOUT_MS;
  holdArrivalDeadlines(app, { requestMs: config.REQUEST_TIMEOUT_MS, uploadMs: config.UPLOAD_TIMEOUT_MS });
  if (tracingEnabled()) traceRequests(app);
  // JSON only: a text/plain body is refused as a wrong Content-Type rather than read as a string.
  app.removeContentTypeParser('text/plain');

  app.addHook('onRequest', authenticate(deps));
  app.addHook('onResponse', logRequest(requestLog, deps.metrics));
  allowSessionLookupFromHosts(app, clients.identity);

  const streams = new EmbedStreams(
    deps.bus,
    deps.logger,
    {
      heartbeatMs: config.EMBED_HEARTBEAT_MS,
      recheckMs: config.EMBED_SESSION_RECHECK_MS,
      maxBufferedBytes: config.EMBED_STREAM_BUFFER_BYTES,
    },
    new StreamSlots(deps.limiter.redis, config.REDIS_PREFIX, {
      perSession: config.EMBED_STREAMS_PER_SESSION,
      perPartner: config.EMBED_STREAMS_PER_PARTNER,
      // Renewed by every heartbeat; a gateway that dies gives its streams' slots back after this.
      leaseMs: config.EMBED_HEARTBEAT_MS * 3,
    }),
    sessionCheck(deps.limiter, clients.identity, deps.logger),
  );
  // Open streams never end by themselves: they end first, so the server's close can finish.
  app.addHook('preClose', async () => streams.close());
  const operations = operationTable(clients, config, streams);
  const routes = httpRoutes(operations);
  for (const route of routes) registerRoute(app, route, deps.idempotency);
  const openapi = buildOpenApi(routes, API_VERSION);
  app.get('/v1/openapi.json', async () => openapi);
  docsRoutes(app);
  app.get('/healthz', async () => ({ status: 'ok' }));
  registerUnversioned(app, deps);
  app.register(mcpRoutes({ ...deps, operations }));
  return app;
}

/**
 * Authenticates `/v1` requests and the MCP endpoint, and applies the key's rate limit (one Redis
 * script per request): the one authentication of every front door.
 */
function authenticate({ limiter, clients, config }: GatewayDeps): onRequestAsyncHookHandler {
  return async (request, reply) => {
    enterRequestId(request.id);
    reply.header('X-Request-Id', request.id);
    const route = request.routeOptions.url;
    // A CORS preflight carries no credentials by design (see embed/session-cors.ts).
    if (request.method === 'OPTIONS' || !isAuthenticatedRoute(route)) return;
    const mcp = MCP_PATHS.includes(route);
    if (mcp) admitToMcp(request, config.MCP_ALLOWED_ORIGINS);
    try {
      const { principal, limit } = await authenticateRequest(
        { header: request.headers.authorization, client: clientKey(request) },
        limiter,
        clients.identity,
        config.AUTH_FAILURES_PER_MINUTE,
      );
      request.principal = principal;
      request.rateLimit = limit;
      applyLimit(reply, limit, principal);
    } catch (error) {
      if (mcp) challengeBearer(request, reply, error);
      throw error;
    }
  };
}

/**
 * One log line per request, its metrics, and the request log of authenticated ones (key id,
 * route, status, duration): one hook, run once per request.
 */
function logRequest(
  requestLog: GatewayDeps['requestLog'],
  metrics?: HttpMetrics,
): onResponseAsyncHookHandler {
  return async (request, reply) => {
    metrics?.observe(request, reply);
    const route = request.routeOptions.url ?? 'unmatched';
    const durationMs = Math.round(reply.elapsedTime);
    const keyId = request.principal?.keyId ?? '';
    request.log.info(
      {
        key_id: keyId || undefined,
        method: request.method,
        route,
        status: reply.statusCode,
        duration_ms: durationMs,
      },
      'request',
    );
    if (isAuthenticatedRoute(route)) {
      requestLog.add({
        keyId,
        method: request.method,
        route,
        status: reply.statusCode,
        durationMs,
        requestId: request.id,
        at: new Date().toISOString(),
      });
    }
  };
}

/** What lives outside `/v1` routes' tables: the hosted connect pages, Meta's callbacks, media files. */
function registerUnversioned(
  app: FastifyInstance,
  { config, limiter, clients, bus, fileReads, metrics }: GatewayDeps,
): void {
  const connectDeps = {
    accounts: clients.accounts,
    limiter,
    limitPerMinute: config.UNAUTHENTICATED_LIMIT_PER_MINUTE,
  };
  for (const prefix of CONNECT_PREFIXES) app.register(connectRoutes(connectDeps), { prefix });
  // The embeddable widget: its loader, its app bundle and the iframe page.
  app.register(embedAppRoutes({ ...connectDeps, identity: clients.identity }));
  app.register(
    metaWebhookRoutes({
      bus,
      accounts: clients.accounts,
      appSecret: config.META_APP_SECRET,
      verifyToken: config.META_VERIFY_TOKEN,
    }),
  );
  // Signed media URLs the networks fetch (outside /v1: the token is the credential).
  app.register(mediaFileRoutes(clients.publishing, fileReads, metrics));
  // Resumable uploads (tus): raw bodies, HEAD and OPTIONS are outside what an operation declares.
  app.register(
    tusRoutes(clients.publishing, {
      videoMaxBytes: config.MEDIA_VIDEO_MAX_BYTES,
      perPartner: config.MEDIA_UPLOADS_PER_PARTNER,
      total: config.MEDIA_UPLOADS_TOTAL,
    }),
  );
}

/** `/v1` routes and the MCP endpoint carry an API key, except the docs and the hosted connect pages. */
function isAuthenticatedRoute(route: string | undefined): route is string {
  if (route !== undefined && MCP_PATHS.includes(route)) return true;
  if (!route?.startsWith('/v1/') || PUBLIC_PATHS.has(route)) return false;
  return !CONNECT_PREFIXES.some((prefix) => route.startsWith(`${prefix}/`));
}
