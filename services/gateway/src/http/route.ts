import { errors } from '@svc/errors';
import type { FastifyInstance, FastifyReply, FastifyRequest } from 'fastify';
import { z } from 'zod';
import { type MatrixRow, PERMISSIONS, type PermissionRow } from '../auth/permissions.ts';
import type { Principal } from '../auth/principal.ts';
import type { Answer, Idempotency, IdempotencyClaim } from './idempotency.ts';
import { JsonText } from './json-text.ts';
import { parseInput } from './validation.ts';

type AnyObject = z.ZodType<Record<string, unknown>>;

/** Routes without query parameters refuse any, like unknown body fields. */
const noQuery = z.strictObject({});

/**
 * A public route, declared once: path, permission row, zod schemas for params, query, body and
 * response. The same declaration registers the Fastify handler, validates input, enforces the
 * permission matrix and produces the OpenAPI document, so the description cannot drift.
 */
export interface RouteSpec<P extends AnyObject, Q extends AnyObject, B extends AnyObject> {
  method: 'GET' | 'POST' | 'PUT' | 'PATCH' | 'DELETE';
  url: string;
  summary: string;
  permission: PermissionRow;
  params?: P;
  query?: Q;
  body?: B;
  /** Success status; 204 has no body. */
  status: number;
  response?: z.ZodType;
  /** Extra statuses a handler may choose (for example 200 for an existing workspace). */
  alternateStatus?: number[];
  /**
   * Fastify setup that this route alone needs (a plugin, a hook, a content-type parser: the
   * multipart parsing of uploads). The route is then registered in its own encapsulated scope,
   * so the rest of the gateway stays JSON-only.
   */
  scope?: (instance: FastifyInstance) => Promise<void>;
  /** A multipart/form-data body the route accepts besides JSON (for the OpenAPI document). */
  formBody?: z.ZodType;
  /**
   * What a POST asks beyond its parsed query and body, for the Idempotency-Key comparison (an
   * uploaded file's digest), so another file under the same key is a conflict, not a replay.
   */
  fingerprint?: (request: FastifyRequest) => unknown;
  /**
   * The handler answers a stream (Server-Sent Events) instead of JSON: it sets the headers and its
   * result is sent as it is.
   */
  streams?: boolean;
  handler(ctx: RouteContext<z.infer<P>, z.infer<Q>, z.infer<B>>): Promise<unknown>;
}

interface RouteContext<P, Q, B> {
  principal: Principal;
  params: P;
  query: Q;
  body: B;
  request: FastifyRequest;
  reply: FastifyReply;
  /** Set on a POST with an Idempotency-Key, for a service that keeps its own claim (posts). */
  idempotency: IdempotencyClaim | undefined;
}

// biome-ignore lint/suspicious/noExplicitAny: a registry of heterogeneous route specs
export type AnyRoute = RouteSpec<any, any, any>;

export type AnyRouteContext = RouteContext<
  Record<string, unknown>,
  Record<string, unknown>,
  Record<string, unknown>
>;

export function defineRoute<P extends AnyObject, Q extends AnyObject, B extends AnyObject>(
  spec: RouteSpec<P, Q, B>,
): RouteSpec<P, Q, B> {
  return spec;
}

/**
 * Applies the matrix row to the caller; own-objects scoping is done by the owning service.
 * `namedWorkspace` is the `workspace` a request names in its query or body (`GET /v1/media?workspace=`,
 * `POST /v1/media`): that is a workspace, not an object in one, so on an own-objects row a
 * workspace key naming another workspace is forbidden (403), as on an own-workspace row.
 */
function enforcePermission(
  row: PermissionRow,
  principal: Principal,
  params: Record<string, unknown>,
  namedWorkspace?: unknown,
): void {
  const matrix: MatrixRow = PERMISSIONS[row];
  const rule = matrix[principal.kind];
  if (rule === 'deny') throw errors.forbidden(`${CALLER_NAMES[principal.kind]} cannot call this endpoint`);
  if (rule === 'own-workspace' && params.id !== principal.workspaceId) {
    throw errors.forbidden('this workspace key can only reach its own workspace');
  }
  if (
    rule === 'own-objects' &&
    typeof namedWorkspace === 'string' &&
    namedWorkspace !== principal.workspaceId
  ) {
    throw errors.forbidden(`${CALLER_NAMES[principal.kind]} can only reach its own workspace`);
  }
  if (matrix.surface && principal.embed && !principal.embed.surfaces.includes(matrix.surface)) {
    throw errors.forbidden(`this embed session was not granted the ${matrix.surface} surface`);
  }
}

const CALLER_NAMES: Record<Principal['kind'], string> = {
  partner: 'a partner key',
  workspace: 'a workspace key',
  embed: 'an embed session',
};

/** The raw `workspace` of the query, else of the body, before validation (so 403 comes before 400). */
function workspaceNamedBy(request: FastifyRequest): unknown {
  const pick = (part: unknown) =>
    typeof part === 'object' && part !== null ? (part as Record<string, unknown>).workspace : undefined;
  return pick(request.query) ?? pick(request.body);
}

/** A handler's result as the text the client receives (and an idempotency record keeps). */
function answerOf(route: AnyRoute, status: number, result: unknown): Answer {
  if (route.status === 204) return { status, text: '' };
  return { status, text: result instanceof JsonText ? result.text : JSON.stringify(result) };
}

export function registerRoute(app: FastifyInstance, route: AnyRoute, idempotency: Idempotency): void {
  const register = (instance: FastifyInstance) =>
    instance.route({
      method: route.method,
      url: route.url,
      config: { permission: route.permission },
      handler: (request, reply) => serve(route, idempotency, request, reply),
    });
  const { scope } = route;
  if (!scope) {
    register(app);
    return;
  }
  app.register(async (instance) => {
    await scope(instance);
    register(instance);
  });
}

/** One request to a route: the matrix, the parsed input, the handler (once per Idempotency-Key). */
async function serve(
  route: AnyRoute,
  idempotency: Idempotency,
  request: FastifyRequest,
  reply: FastifyReply,
) {
  const principal = request.principal;
  if (!principal) throw errors.unauthorized();
  // The matrix first, on the raw path: a workspace key naming any other workspace, even one
  // that cannot exist, is outside its workspace (403), not told whether it exists.
  enforcePermission(
    route.permission,
    principal,
    request.params as Record<string, unknown>,
    workspaceNamedBy(request),
  );
  const params = parseInput(route.params, request.params, 'path');
  const query = parseInput(route.query ?? noQuery, request.query, 'query');
  const body = parseInput(route.body, request.body ?? {}, 'body');
  const input = { principal, params, query, body, request, reply };
  if (route.streams) {
    const stream = await route.handler({ ...input, idempotency: undefined });
    return reply.code(route.status).send(stream);
  }
  const handle = async (claim: IdempotencyClaim | undefined): Promise<Answer> => {
    reply.code(route.status); // a handler may choose one of its alternateStatus codes instead
    const result = await route.handler({ ...input, idempotency: claim });
    return answerOf(route, reply.statusCode, result);
  };
  const answer =
    route.method === 'POST'
      ? await idempotency.run(request, principal, [query, body, route.fingerprint?.(request)], handle)
      : { ...(await handle(undefined)), replayed: false };
  if (answer.replayed) reply.header('Idempotent-Replayed', 'true');
  reply.code(answer.status);
  if (answer.status === 204) return reply.send();
  return reply.type('application/json; charset=utf-8').send(answer.text);
}
