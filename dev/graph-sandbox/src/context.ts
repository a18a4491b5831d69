import type { FastifyRequest } from 'fastify';
import { authenticate, type Caller } from './auth.ts';
import { type FieldSpec, type PageRequest, parseFields } from './fields.ts';
import { unsupportedGet } from './graph-errors.ts';
import { accessTokenOf, mergedParams, optionalInt, optionalString, type Params } from './params.ts';
import type { World } from './world.ts';

/** One Graph call: its parameters, selected fields and (lazily) its authenticated caller. */
export class Ctx {
  readonly params: Params;
  readonly fields: FieldSpec[] | null;
  private authenticated: Caller | undefined;

  constructor(
    readonly world: World,
    readonly req: FastifyRequest,
  ) {
    this.params = mergedParams(req);
    this.fields = parseFields(optionalString(this.params, 'fields'));
  }

  get now(): number {
    return this.world.clock.now();
  }

  caller(): Caller {
    this.authenticated ??= authenticate(
      this.world,
      accessTokenOf(this.req, this.params),
      optionalString(this.params, 'appsecret_proof'),
    );
    return this.authenticated;
  }

  pageRequest(defaultLimit = 25): PageRequest {
    const selfUrl = new URL(this.req.url, this.world.config.publicUrl);
    selfUrl.pathname = `/v25.0${selfUrl.pathname}`;
    selfUrl.searchParams.delete('after');
    return {
      limit: Math.max(1, Math.min(optionalInt(this.params, 'limit') ?? defaultLimit, 100)),
      after: optionalString(this.params, 'after'),
      selfUrl,
    };
  }
}

export type NodeKind =
  | 'user'
  | 'page'
  | 'instagram'
  | 'container'
  | 'ig_media'
  | 'page_post'
  | 'photo'
  | 'page_video'
  | 'conversation'
  | 'message'
  | 'comment'
  | 'participant'
  | 'app';

/** Finds what an id names; `me` is whoever the token belongs to (a user, or a Page for a page token). */
export function resolveNode(ctx: Ctx, id: string, method = 'get'): { kind: NodeKind; id: string } {
  const s = ctx.world.store;
  if (id === 'me') {
    const caller = ctx.caller();
    if (caller.kind === 'app') {
      throw unsupportedGet('me', method);
    }
    return caller.kind === 'page' && caller.pageId
      ? { kind: 'page', id: caller.pageId }
      : { kind: 'user', id: caller.userId };
  }
  const tables: [NodeKind, Map<string, unknown>][] = [
    ['user', s.users],
    ['page', s.pages],
    ['instagram', s.igAccounts],
    ['container', s.containers],
    ['ig_media', s.igMedia],
    ['page_post', s.pagePosts],
    ['photo', s.photos],
    ['page_video', s.pageVideos],
    ['conversation', s.conversations],
    ['message', s.messages],
    ['comment', s.comments],
    ['participant', s.participants],
  ];
  for (const [kind, table] of tables) if (table.has(id)) return { kind, id };
  if (id === ctx.world.config.appId) return { kind: 'app', id };
  // Authenticate first: a bad token on an unknown id is still a token error, as on Meta.
  ctx.caller();
  throw unsupportedGet(id, method);
}

type Handler = (ctx: Ctx, id: string) => unknown | Promise<unknown>;
export type Route = `${'GET' | 'POST' | 'DELETE'} ${NodeKind}${'' | `/${string}`}`;
export type RouteTable = Partial<Record<Route, Handler>>;
