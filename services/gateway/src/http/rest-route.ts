import { errors } from '@svc/errors';
import type { FastifyInstance, FastifyReply, FastifyRequest } from 'fastify';
import { z } from 'zod';
import { enforcePermission } from '../auth/permissions.ts';
import { type AnyOperation, perform } from '../operations/operation.ts';
import { type Idempotency, idempotencyKeyOf } from './idempotency.ts';
import { parseInput } from './validation.ts';

/** Routes without query parameters refuse any, like unknown body fields. */
const noQuery = z.strictObject({});

/**
 * The REST door of an operation: the Fastify route at its path. The widget's routes come through
 * here too (`embed/widget-route.ts` derives them and says their origin).
 */
export function registerRoute(app: FastifyInstance, operation: AnyOperation, idempotency: Idempotency): void {
  const register = (instance: FastifyInstance) =>
    instance.route({
      method: operation.method,
      url: operation.url,
      config: { permission: operation.permission },
      handler: (request, reply) => serve(operation, idempotency, request, reply),
    });
  const { scope } = operation;
  if (!scope) {
    register(app);
    return;
  }
  app.register(async (instance) => {
    await scope(instance);
    register(instance);
  });
}

/** The raw `workspace` of the query, else of the body, before validation (so 403 comes before 400). */
function workspaceNamedBy(request: FastifyRequest): unknown {
  const pick = (part: unknown) =>
    typeof part === 'object' && part !== null ? (part as Record<string, unknown>).workspace : undefined;
  return pick(request.query) ?? pick(request.body);
}

/** One request: the matrix, the parsed input, the operation (once per Idempotency-Key). */
async function serve(
  operation: AnyOperation,
  idempotency: Idempotency,
  request: FastifyRequest,
  reply: FastifyReply,
) {
  const principal = request.principal;
  if (!principal) throw errors.unauthorized();
  // The matrix first, on the raw path: a workspace key naming any other workspace, even one
  // that cannot exist, is outside its workspace (403), not told whether it exists.
  const rawParams = request.params as Record<string, unknown>;
  enforcePermission(operation.permission, principal, rawParams.id, workspaceNamedBy(request));
  const params = parseInput<Record<string, unknown>>(operation.params, request.params, 'path');
  const query = parseInput<Record<string, unknown>>(operation.query ?? noQuery, request.query, 'query');
  const body = parseInput<Record<string, unknown>>(operation.body, request.body ?? {}, 'body');
  const ctx = { principal, origin: 'api' as const, params, query, body, http: { request, reply } };
  if (operation.streams) {
    const stream = await operation.run({ ...ctx, idempotency: undefined });
    return reply.code(operation.status).send(stream);
  }
  const answer =
    operation.method === 'POST'
      ? await idempotency.run(
          {
            key: idempotencyKeyOf(request),
            called: (request.url.split('?')[0] ?? '').replace(/\/+$/, ''),
            principal,
            asked: [query, body, operation.fingerprint?.(request)],
            log: request.log,
          },
          (claim) => perform(operation, { ...ctx, idempotency: claim }),
        )
      : await perform(operation, { ...ctx, idempotency: undefined });
  if (answer.replayed) reply.header('Idempotent-Replayed', 'true');
  reply.code(answer.status);
  if (answer.status === 204) return reply.send();
  return reply.type('application/json; charset=utf-8').send(answer.text);
}
