import type { Bus } from '@svc/bus';
import { enterRequestId, type Logger, newRequestId, REQUEST_ID_HEADER, saneRequestId } from '@svc/logging';
import Fastify, {
  type FastifyBaseLogger,
  type FastifyInstance,
  LogController,
  type onRequestAsyncHookHandler,
  type onResponseAsyncHookHandler,
} from 'fastify';
import { authenticateRequest, rateLimitedError, retryAfterSeconds } from './auth/authenticate.ts';
import type { Limiter, LimitResult } from './auth/limiter.ts';
import type { Principal } from './auth/principal.ts';
import type { ServiceClients } from './clients.ts';
import type { GatewayConfig } from './config.ts';
import { CONNECT_PREFIXES, connectRoutes } from './connect/routes.ts';
import { earlyErrorOptions } from './http/early-errors.ts';
import { installErrorHandling } from './http/errors.ts';
import type { Idempotency } from './http/idempotency.ts';
import { buildOpenApi, renderDocs } from './http/openapi.ts';
import type { RequestLogBuffer } from './http/request-log.ts';
import { type AnyRoute, registerRoute } from './http/route.ts';
import { metaWebhookRoutes } from './provider/meta-webhooks.ts';
import { accountRoutes } from './routes/accounts.ts';
import { conversationRoutes } from './routes/conversations.ts';
import { eventRoutes } from './routes/events.ts';
import { keyRoutes } from './routes/keys.ts';
import { mediaFileRoutes, mediaRoutes } from './routes/media.ts';
import { postRoutes } from './routes/posts.ts';
import { webhookRoutes } from './routes/webhook.ts';
import { workspaceRoutes } from './routes/workspaces.ts';

declare module 'fastify' {
  interface FastifyRequest {
    principal?: Principal;
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
}

/**
 * Every public route, in one list: it registers handlers and generates the OpenAPI document.
 * `config` carries the upload limit (its default applies when left out, as in the matrix test).
 */
export function allRoutes(
  clients: ServiceClients,
  config?: Pick<GatewayConfig, 'MEDIA_MAX_BYTES'>,
): AnyRoute[] {
  return [
    ...workspaceRoutes(clients.identity),
    ...keyRoutes(clients.identity),
    ...accountRoutes(clients.accounts),
    ...mediaRoutes(clients.publishing, config?.MEDIA_MAX_BYTES),
    ...postRoutes(clients.publishing),
    ...conversationRoutes(clients.inbox),
    ...webhookRoutes(clients.webhooks),
    ...eventRoutes(clients.webhooks),
  ];
}

const PUBLIC_PATHS = new Set(['/v1/openapi.json', '/v1/docs', '/healthz', '/readyz']);

export function buildGateway(deps: GatewayDeps): FastifyInstance {
  const { config, clients, requestLog } = deps;
  const app = Fastify({
    loggerInstance: deps.logger as FastifyBaseLogger,
    // Our onResponse hook writes one line per request (key id, route, status, duration).
    logController: new LogController({ disableRequestLogging: true }),
    bodyLimit: config.BODY_LIMIT_BYTES,
    requestTimeout: config.REQUEST_TIMEOUT_MS,
    genReqId: (req) => saneRequestId(req.headers[REQUEST_ID_HEADER]) ?? newRequestId(),
    routerOptions: { ignoreTrailingSlash: true },
    // Behind a load balancer, the client's address (per-IP limits) comes from X-Forwarded-For.
    trustProxy: config.TRUST_PROXY,
    // While it drains at stop, a request that comes on a kept-alive connection is served like the
    // ones in flight, not refused with Fastify's bare 503 (no error envelope); /readyz already
    // sends new traffic elsewhere (seen in the fault suite's SIGTERM of a gateway replica).
    return503OnClosing: false,
    ...earlyErrorOptions,
  });
  installErrorHandling(app);
  // JSON only: a text/plain body is refused as a wrong Content-Type rather than read as a string.
  app.removeContentTypeParser('text/plain');

  app.addHook('onRequest', authenticate(deps));
  app.addHook('onResponse', logRequest(requestLog));

  const routes = allRoutes(clients, config);
  for (const route of routes) registerRoute(app, route, deps.idempotency);
  const openapi = buildOpenApi(routes, '1.0.0');
  app.get('/v1/openapi.json', async () => openapi);
  app.get('/v1/docs', async (_request, reply) =>
    reply.type('text/html; charset=utf-8').send(renderDocs(openapi)),
  );
  app.get('/healthz', async () => ({ status: 'ok' }));
  registerUnversioned(app, deps);
  return app;
}

/** Authenticates `/v1` requests and applies the key's rate limit (one Redis script per request). */
function authenticate({ limiter, clients }: GatewayDeps): onRequestAsyncHookHandler {
  return async (request, reply) => {
    enterRequestId(request.id);
    reply.header('X-Request-Id', request.id);
    const route = request.routeOptions.url;
    if (!isAuthenticatedRoute(route)) return;
    const { principal, limit } = await authenticateRequest(
      request.headers.authorization,
      limiter,
      clients.identity,
    );
    request.principal = principal;
    setRateLimitHeaders(reply, limit);
    if (!limit.allowed) {
      reply.header('Retry-After', String(retryAfterSeconds(limit)));
      throw rateLimitedError(limit);
    }
  };
}

/** One log line per request, and the request log of authenticated ones (key id, route, status, duration). */
function logRequest(requestLog: GatewayDeps['requestLog']): onResponseAsyncHookHandler {
  return async (request, reply) => {
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
function registerUnversioned(app: FastifyInstance, { config, limiter, clients, bus }: GatewayDeps): void {
  const connectDeps = {
    accounts: clients.accounts,
    limiter,
    limitPerMinute: config.UNAUTHENTICATED_LIMIT_PER_MINUTE,
  };
  for (const prefix of CONNECT_PREFIXES) app.register(connectRoutes(connectDeps), { prefix });
  app.register(
    metaWebhookRoutes({
      bus,
      accounts: clients.accounts,
      appSecret: config.META_APP_SECRET,
      verifyToken: config.META_VERIFY_TOKEN,
    }),
  );
  // Signed media URLs the networks fetch (outside /v1: the token is the credential).
  app.register(mediaFileRoutes(clients.publishing));
}

/** `/v1` routes carry an API key, except the docs and the hosted connect pages. */
function isAuthenticatedRoute(route: string | undefined): route is string {
  if (!route?.startsWith('/v1/') || PUBLIC_PATHS.has(route)) return false;
  return !CONNECT_PREFIXES.some((prefix) => route.startsWith(`${prefix}/`));
}

function setRateLimitHeaders(
  reply: { header(name: string, value: string): unknown },
  limit: LimitResult,
): void {
  reply.header('X-RateLimit-Limit', String(limit.limit));
  reply.header('X-RateLimit-Remaining', String(limit.remaining));
  reply.header('X-RateLimit-Reset', String(Math.max(1, Math.ceil(limit.waitMs / 1000))));
}
