import { errors } from '@svc/errors';
import type { FastifyInstance, FastifyReply, FastifyRequest } from 'fastify';
import { z } from 'zod';
import { PERMISSIONS, type PermissionRow } from '../auth/permissions.ts';
import type { Principal } from '../auth/principal.ts';
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
  handler(ctx: RouteContext<z.infer<P>, z.infer<Q>, z.infer<B>>): Promise<unknown>;
}

export interface RouteContext<P, Q, B> {
  principal: Principal;
  params: P;
  query: Q;
  body: B;
  request: FastifyRequest;
  reply: FastifyReply;
}

// biome-ignore lint/suspicious/noExplicitAny: a registry of heterogeneous route specs
export type AnyRoute = RouteSpec<any, any, any>;

export function defineRoute<P extends AnyObject, Q extends AnyObject, B extends AnyObject>(
  spec: RouteSpec<P, Q, B>,
): RouteSpec<P, Q, B> {
  return spec;
}

/** Applies the matrix row to the caller; own-objects scoping is done by the owning service. */
export function enforcePermission(
  row: PermissionRow,
  principal: Principal,
  params: Record<string, unknown>,
): void {
  const rule = PERMISSIONS[row][principal.kind];
  if (rule === 'deny') throw errors.forbidden(`a ${principal.kind} key cannot call this endpoint`);
  if (rule === 'own-workspace' && params.id !== principal.workspaceId) {
    throw errors.forbidden('this workspace key can only reach its own workspace');
  }
}

export function registerRoute(app: FastifyInstance, route: AnyRoute): void {
  app.route({
    method: route.method,
    url: route.url,
    config: { permission: route.permission },
    handler: async (request, reply) => {
      const principal = request.principal;
      if (!principal) throw errors.unauthorized();
      const params = parseInput(route.params, request.params, 'path');
      enforcePermission(route.permission, principal, params as Record<string, unknown>);
      const query = parseInput(route.query ?? noQuery, request.query, 'query');
      const body = parseInput(route.body, request.body ?? {}, 'body');
      reply.code(route.status); // a handler may choose one of its alternateStatus codes instead
      const result = await route.handler({ principal, params, query, body, request, reply });
      return route.status === 204 ? reply.send() : result;
    },
  });
}
