import { assertIgAccess, assertPageAccess, requireScope } from '../auth.ts';
import type { Ctx, RouteTable } from '../context.ts';
import { type NodeShape, paginate, renderNode } from '../fields.ts';
import { notAuthorizedForObject, pageTokenRequired } from '../graph-errors.ts';
import { listParam } from '../params.ts';
import type { IgAccount, Page, Token } from '../store.ts';
import { deauthorizeUser, pageTokenFor } from '../tokens.ts';
import type { World } from '../world.ts';

const TASKS = ['ANALYZE', 'ADVERTISE', 'MESSAGING', 'MODERATE', 'CREATE_CONTENT', 'MANAGE'];

function igShape(world: World, account: IgAccount): NodeShape {
  // Stories are not on the profile grid, so Meta does not count them.
  const mediaCount = () =>
    [...world.store.igMedia.values()].filter((m) => m.igId === account.id && m.productType !== 'STORY')
      .length;
  return {
    type: 'IGUser',
    defaults: ['id', 'username'],
    fields: {
      id: () => account.id,
      ig_id: () => Number(account.id.slice(-10)),
      username: () => account.username,
      name: () => account.name,
      profile_picture_url: () => `${world.config.publicUrl}/__sandbox/avatar/${account.id}.jpg`,
      followers_count: () => 0,
      follows_count: () => 0,
      media_count: mediaCount,
      biography: () => '',
      website: () => '',
    },
  };
}

/** A Page; `access_token` is only shown to a user token the Page was granted to. */
function pageShape(world: World, page: Page, userToken: Token | null): NodeShape {
  const ig = page.igId ? world.store.igAccounts.get(page.igId) : undefined;
  const igRef = () =>
    ig ? renderNode(igShape(world, ig), [{ name: 'username', sub: null, limit: null }]) : undefined;
  return {
    type: 'Page',
    defaults: ['id', 'name'],
    fields: {
      id: () => page.id,
      name: () => page.name,
      category: () => page.category,
      category_list: () => [{ id: '2500', name: page.category }],
      link: () => `${world.config.publicUrl}/${page.id}`,
      tasks: () => TASKS,
      access_token: () => (userToken ? pageTokenFor(world, userToken, page.id).value : undefined),
      instagram_business_account: igRef,
      connected_instagram_account: igRef,
      picture: () => ({ data: { url: `${world.config.publicUrl}/__sandbox/avatar/${page.id}.jpg` } }),
    },
  };
}

function userCaller(ctx: Ctx, userId: string): Token {
  const caller = ctx.caller();
  if (caller.kind !== 'user' || caller.userId !== userId) throw notAuthorizedForObject();
  return caller;
}

export const accountRoutes: RouteTable = {
  'GET user': (ctx, id) => {
    userCaller(ctx, id);
    const user = ctx.world.store.users.get(id);
    return renderNode(
      { type: 'User', defaults: ['id', 'name'], fields: { id: () => id, name: () => user?.name } },
      ctx.fields,
    );
  },
  'GET user/accounts': (ctx, id) => {
    const token = userCaller(ctx, id);
    requireScope(token, 'pages_show_list');
    const pageIds = ctx.world.store.grants.get(id)?.pageIds ?? [];
    const pages = pageIds.flatMap((pid) => ctx.world.store.pages.get(pid) ?? []);
    const specs =
      ctx.fields ??
      ['access_token', 'category', 'category_list', 'name', 'id', 'tasks'].map((name) => ({
        name,
        sub: null,
        limit: null,
      }));
    return paginate(pages, ctx.pageRequest(), (page) => renderNode(pageShape(ctx.world, page, token), specs));
  },
  'GET user/permissions': (ctx, id) => {
    userCaller(ctx, id);
    const scopes = ctx.world.store.grants.get(id)?.scopes ?? [];
    return { data: scopes.map((permission) => ({ permission, status: 'granted' })) };
  },
  'DELETE user/permissions': async (ctx, id) => {
    userCaller(ctx, id);
    await deauthorizeUser(ctx.world, id);
    return { success: true };
  },
  'GET page': (ctx, id) => {
    const token = assertPageAccess(ctx.world, ctx.caller(), id);
    const page = ctx.world.store.pages.get(id);
    if (!page) throw notAuthorizedForObject();
    return renderNode(pageShape(ctx.world, page, token.kind === 'user' ? token : null), ctx.fields);
  },
  'GET instagram': (ctx, id) => {
    assertIgAccess(ctx.world, ctx.caller(), id);
    const account = ctx.world.store.igAccounts.get(id);
    if (!account) throw notAuthorizedForObject();
    return renderNode(igShape(ctx.world, account), ctx.fields);
  },
  'POST page/subscribed_apps': (ctx, id) => {
    const token = assertPageAccess(ctx.world, ctx.caller(), id);
    if (token.kind !== 'page') throw pageTokenRequired();
    const page = ctx.world.store.pages.get(id);
    if (page) page.subscribedFields = listParam(ctx.params, 'subscribed_fields');
    return { success: true };
  },
  'GET page/subscribed_apps': (ctx, id) => {
    assertPageAccess(ctx.world, ctx.caller(), id);
    const page = ctx.world.store.pages.get(id);
    const fields = page?.subscribedFields ?? [];
    const app = {
      category: 'Business',
      link: ctx.world.config.publicUrl,
      name: ctx.world.config.appName,
      id: ctx.world.config.appId,
      subscribed_fields: fields,
    };
    return { data: fields.length ? [app] : [] };
  },
  'DELETE page/subscribed_apps': (ctx, id) => {
    assertPageAccess(ctx.world, ctx.caller(), id);
    const page = ctx.world.store.pages.get(id);
    if (page) page.subscribedFields = [];
    return { success: true };
  },
};
