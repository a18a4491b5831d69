import { ServiceError } from '@svc/errors';
import { APP_CSS, APP_JS, APP_VERSION, WIDGET_JS, WIDGET_VERSION } from '@svc/widget';
import type { FastifyInstance, FastifyReply, FastifyRequest } from 'fastify';
import { retryAfterSeconds } from '../auth/authenticate.ts';
import type { Limiter } from '../auth/limiter.ts';
import type { IdentityClient } from '../clients.ts';
import { PAGE_CSP } from '../connect/html.ts';
import { messagePage } from '../connect/pages.ts';
import { clientKey } from '../http/client-address.ts';
import { appCsp, appPage, endedPage } from './app-page.ts';

/**
 * The widget's unauthenticated endpoints: the loader partners include (`/embed/widget.js`), the
 * app's versioned bundle, and the iframe page `/embed/app?session=`, which answers the session's
 * allowed origins as `frame-ancestors` and is never cached. The token never reaches these URLs:
 * the loader hands it to the app by postMessage.
 */
export interface EmbedAppDeps {
  identity: IdentityClient;
  limiter: Limiter;
  limitPerMinute: number;
}

/** The loader's URL is stable (partners paste it), so it is cached briefly and revalidated. */
const LOADER_CACHE = 'public, max-age=300, must-revalidate';
/** The app's bundle URLs carry their content version: cached for good. */
const BUNDLE_CACHE = 'public, max-age=31536000, immutable';

export function embedAppRoutes(deps: EmbedAppDeps) {
  return async (scope: FastifyInstance) => {
    scope.addHook('onRequest', async (_request, reply) => {
      reply.header('X-Content-Type-Options', 'nosniff');
      reply.header('Referrer-Policy', 'no-referrer');
    });
    // Every answer here is a page or a file, never the API's JSON envelope.
    scope.setErrorHandler((error, request, reply) => {
      request.log.error({ err: error }, 'embed page failed');
      return refuse(
        reply,
        503,
        messagePage('/connect', 'Temporarily unavailable', 'Please reload in a moment.'),
      );
    });

    scope.get('/embed/widget.js', async (request, reply) =>
      sendAsset(request, reply, 'text/javascript', WIDGET_JS, WIDGET_VERSION, LOADER_CACHE),
    );
    scope.get(`/embed/app.${APP_VERSION}.js`, async (request, reply) =>
      sendAsset(request, reply, 'text/javascript', APP_JS, APP_VERSION, BUNDLE_CACHE),
    );
    scope.get(`/embed/app.${APP_VERSION}.css`, async (request, reply) =>
      sendAsset(request, reply, 'text/css', APP_CSS, APP_VERSION, BUNDLE_CACHE),
    );

    scope.get<{ Querystring: { session?: string } }>('/embed/app', async (request, reply) => {
      reply.header('Cache-Control', 'no-store');
      const limit = await deps.limiter.limitByIp(clientKey(request), deps.limitPerMinute);
      if (!limit.allowed) {
        reply.header('Retry-After', String(retryAfterSeconds(limit)));
        return refuse(
          reply,
          429,
          messagePage('/connect', 'Too many requests', 'Wait a minute, then reload.'),
        );
      }
      const origins = await liveOrigins(deps.identity, request.query.session);
      if (!origins) return refuse(reply, 404, endedPage('/connect'));
      return reply
        .header('Content-Security-Policy', appCsp(origins))
        .type('text/html; charset=utf-8')
        .send(appPage({ allowedOrigins: origins, version: APP_VERSION }));
    });
  };
}

/** The allowed origins of a live session; undefined for an unknown, expired or ended one. */
async function liveOrigins(identity: IdentityClient, sessionId: string | undefined) {
  if (!sessionId || !/^[A-Za-z0-9_-]{1,64}$/.test(sessionId)) return undefined;
  try {
    const { session, live } = await identity.describeEmbedSession({ sessionId });
    return live && session ? session.allowedOrigins : undefined;
  } catch (error) {
    if (error instanceof ServiceError && error.code === 'not_found') return undefined;
    throw error;
  }
}

function refuse(reply: FastifyReply, status: number, page: string) {
  return reply
    .code(status)
    .header('Content-Security-Policy', PAGE_CSP)
    .type('text/html; charset=utf-8')
    .send(page);
}

function sendAsset(
  request: FastifyRequest,
  reply: FastifyReply,
  type: string,
  body: string,
  version: string,
  cacheControl: string,
) {
  const etag = `"${version}"`;
  reply.header('Cache-Control', cacheControl).header('ETag', etag);
  if (request.headers['if-none-match'] === etag) return reply.code(304).send();
  return reply.type(`${type}; charset=utf-8`).send(body);
}
