import type { FastifyInstance, FastifyRequest } from 'fastify';
import { Ctx, type Route, type RouteTable, resolveNode } from './context.ts';
import { accountRoutes } from './graph/accounts.ts';
import { commentRoutes } from './graph/comments.ts';
import { inboxRoutes } from './graph/inbox.ts';
import { instagramRoutes } from './graph/instagram.ts';
import { pageVideoRoutes } from './graph/page-reels.ts';
import { pageVideoReadRoutes } from './graph/page-video.ts';
import { pageRoutes } from './graph/pages.ts';
import { unknownPath, unsupportedGet } from './graph-errors.ts';
import { optionalString } from './params.ts';
import type { World } from './world.ts';

const ROUTES: RouteTable = {
  ...accountRoutes,
  ...instagramRoutes,
  ...pageRoutes,
  ...pageVideoRoutes,
  ...pageVideoReadRoutes,
  ...inboxRoutes,
  ...commentRoutes,
};
const KNOWN_EDGES = new Set(Object.keys(ROUTES).map((route) => route.split(' ')[1]));

/** `POST ...?method=delete` is a DELETE on Graph (facts §0.2). */
function effectiveMethod(ctx: Ctx, req: FastifyRequest): 'GET' | 'POST' | 'DELETE' {
  if (req.method === 'POST' && optionalString(ctx.params, 'method')?.toUpperCase() === 'DELETE')
    return 'DELETE';
  return req.method === 'POST' ? 'POST' : req.method === 'DELETE' ? 'DELETE' : 'GET';
}

/**
 * Graph addresses everything as `/{id}` or `/{id}/{edge}`. The id is resolved to the kind of
 * object it names (`me` to the token's owner), then dispatched to that kind's handler.
 */
async function dispatch(world: World, req: FastifyRequest, id: string, edge: string | null) {
  const ctx = new Ctx(world, req);
  const method = effectiveMethod(ctx, req);
  const node = resolveNode(ctx, id, method.toLowerCase());
  const key = `${method} ${node.kind}${edge ? `/${edge}` : ''}` as Route;
  const handler = ROUTES[key];
  if (!handler) {
    ctx.caller();
    if (edge && !KNOWN_EDGES.has(`${node.kind}/${edge}`)) throw unknownPath(edge);
    throw unsupportedGet(id, method.toLowerCase());
  }
  return handler(ctx, node.id);
}

export function registerGraphNodes(app: FastifyInstance, world: World): void {
  const methods: ('GET' | 'POST' | 'DELETE')[] = ['GET', 'POST', 'DELETE'];
  app.route<{ Params: { id: string } }>({
    method: methods,
    url: '/:id',
    handler: (req) => dispatch(world, req, req.params.id, null),
  });
  app.route<{ Params: { id: string; edge: string } }>({
    method: methods,
    url: '/:id/:edge',
    handler: (req) => dispatch(world, req, req.params.id, req.params.edge),
  });
}
