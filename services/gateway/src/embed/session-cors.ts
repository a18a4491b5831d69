import type { FastifyInstance, FastifyReply, FastifyRequest, onSendHookHandler } from 'fastify';
import type { IdentityClient } from '../clients.ts';

/**
 * Cross-origin access to `GET /v1/embed/session`, the one API call made from the partner's page:
 * widget.js asks it which session its token belongs to, to name that session (never the token)
 * in the iframe's URL. Every other `/v1/embed/*` call comes from our own iframe (same origin).
 * A 200 is readable only from the session's allowed origins; a refusal carries no personal data
 * and is readable by any page, so the loader can tell an ended session from a network failure.
 */
const SESSION_PATH = '/v1/embed/session';

export function allowSessionLookupFromHosts(app: FastifyInstance, identity: IdentityClient): void {
  // The preflight carries no credentials by design: it learns only which header may be sent.
  app.options(SESSION_PATH, async (request, reply) => {
    const origin = request.headers.origin;
    if (origin) {
      reply.header('Access-Control-Allow-Origin', origin);
      reply.header('Access-Control-Allow-Methods', 'GET');
      reply.header('Access-Control-Allow-Headers', 'authorization');
      reply.header('Access-Control-Max-Age', '600');
    }
    reply.header('Vary', 'Origin');
    return reply.code(204).send();
  });
  // On that one route only: an async onSend hook on every route costs each request a promise.
  app.addHook('onRoute', (route) => {
    if (route.url !== SESSION_PATH || route.method !== 'GET') return;
    route.onSend = [...toArray(route.onSend), allowReadingFromSessionOrigin(identity)];
  });
}

function toArray<T>(value: T | T[] | undefined): T[] {
  if (value === undefined) return [];
  return Array.isArray(value) ? value : [value];
}

function allowReadingFromSessionOrigin(identity: IdentityClient): onSendHookHandler {
  return async (request, reply, payload) => {
    reply.header('Vary', 'Origin');
    const origin = request.headers.origin;
    if (origin && (await readableFrom(request, reply, origin, identity)))
      reply.header('Access-Control-Allow-Origin', origin);
    return payload;
  };
}

async function readableFrom(
  request: FastifyRequest,
  reply: FastifyReply,
  origin: string,
  identity: IdentityClient,
): Promise<boolean> {
  const sessionId = request.principal?.keyId;
  if (reply.statusCode >= 400 || !sessionId) return true;
  try {
    const { session } = await identity.describeEmbedSession({ sessionId });
    return session?.allowedOrigins.includes(origin) ?? false;
  } catch {
    return false;
  }
}
