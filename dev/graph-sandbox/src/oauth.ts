import type { FastifyInstance, FastifyReply } from 'fastify';
import { authenticate, tokenProblem } from './auth.ts';
import { unixSeconds } from './clock.ts';
import { consentPage, type DialogParams, dialogErrorPage } from './consent-page.ts';
import { Ctx } from './context.ts';
import { graphFailure, invalidParam } from './graph-errors.ts';
import { listParam, mergedParams, optionalString, type Params, requireString } from './params.ts';
import type { Token } from './store.ts';
import { mintUserToken } from './tokens.ts';
import type { World } from './world.ts';

const CODE_TTL_MS = 10 * 60 * 1000;

function dialogParams(params: Params): DialogParams {
  return {
    client_id: optionalString(params, 'client_id') ?? '',
    redirect_uri: optionalString(params, 'redirect_uri') ?? '',
    state: optionalString(params, 'state') ?? '',
    scope: optionalString(params, 'scope') ?? '',
  };
}

/** Checks the dialog's parameters; answers with Meta-like error text when they are unusable. */
function dialogProblem(world: World, p: DialogParams): string | null {
  if (p.client_id !== world.config.appId)
    return 'Invalid App ID: The provided app ID does not look like a valid app ID.';
  if (!/^https?:\/\//.test(p.redirect_uri))
    return "URL blocked: This redirect failed because the redirect URI is not whitelisted in the app's Client OAuth Settings.";
  return null;
}

function redirectTo(reply: FastifyReply, base: string, query: Record<string, string>, fragment = '') {
  const url = new URL(base);
  for (const [k, v] of Object.entries(query)) url.searchParams.set(k, v);
  url.hash = fragment;
  return reply.code(302).header('location', url.toString()).send();
}

export function registerOauth(app: FastifyInstance, world: World): void {
  app.get('/dialog/oauth', async (req, reply) => {
    const p = dialogParams(mergedParams(req));
    const problem = dialogProblem(world, p);
    reply.type('text/html; charset=utf-8');
    if (problem) return reply.code(400).send(dialogErrorPage(problem));
    const users = [...world.store.users.values()].map((user) => ({
      user,
      pages: user.pageIds.flatMap((id) => {
        const page = world.store.pages.get(id);
        return page
          ? [{ page, instagram: page.igId ? (world.store.igAccounts.get(page.igId) ?? null) : null }]
          : [];
      }),
    }));
    return consentPage(world.config.appName, p, users);
  });

  app.post('/__sandbox/consent', async (req, reply) => {
    const params = mergedParams(req);
    const p = dialogParams(params);
    const problem = dialogProblem(world, p);
    if (problem) return reply.code(400).type('text/html; charset=utf-8').send(dialogErrorPage(problem));
    const state = { state: p.state };
    if (optionalString(params, 'decision') !== 'approve') {
      return redirectTo(reply, p.redirect_uri, {
        error: 'access_denied',
        error_code: '200',
        error_description: 'Permissions error',
        error_reason: 'user_denied',
        ...state,
      });
    }
    const user = world.store.users.get(optionalString(params, 'user_id') ?? '');
    if (!user) return reply.code(400).type('text/html; charset=utf-8').send(dialogErrorPage('Pick a user.'));
    const picked = listParam(params, 'page_id').filter((id) => user.pageIds.includes(id));
    const pageIds = picked.length > 0 ? picked : [...user.pageIds];
    const scopes = [...new Set(['public_profile', ...p.scope.split(/[,\s]+/).filter(Boolean)])];
    world.store.grants.set(user.id, { scopes, pageIds });
    const code = world.ids.code();
    world.store.codes.set(code, {
      code,
      userId: user.id,
      redirectUri: p.redirect_uri,
      scopes,
      pageIds,
      createdAt: world.clock.now(),
      used: false,
    });
    return redirectTo(reply, p.redirect_uri, { code, ...state }, '_=_');
  });

  // Demo convenience for `pnpm start`: a dialog with no users can make one and come back.
  app.post('/__sandbox/consent/demo-user', async (req, reply) => {
    const p = dialogParams(mergedParams(req));
    world.createUser({
      name: 'Demo User',
      pages: [{ name: 'Demo Bakery', instagram: { username: 'demobakery' } }],
    });
    const back = new URL('/dialog/oauth', world.config.publicUrl);
    for (const [k, v] of Object.entries(p)) back.searchParams.set(k, v);
    return reply
      .code(303)
      .header('location', back.pathname + back.search)
      .send();
  });

  app.route({
    method: ['GET', 'POST'],
    url: '/oauth/access_token',
    handler: (req) => accessToken(new Ctx(world, req)),
  });
  app.get('/debug_token', (req) => debugToken(new Ctx(world, req)));
}

function checkApp(ctx: Ctx): void {
  if (requireString(ctx.params, 'client_id') !== ctx.world.config.appId) {
    throw graphFailure(101, 'Error validating application. Invalid application ID.');
  }
  if (requireString(ctx.params, 'client_secret') !== ctx.world.config.appSecret) {
    throw graphFailure(1, 'Error validating client secret.');
  }
}

function tokenResponse(token: Token, world: World) {
  const expiresIn =
    token.expiresAt === null ? undefined : Math.round((token.expiresAt - world.clock.now()) / 1000);
  return { access_token: token.value, token_type: 'bearer', expires_in: expiresIn };
}

function accessToken(ctx: Ctx) {
  const { world, params } = ctx;
  const grantType = optionalString(params, 'grant_type');
  if (grantType === 'client_credentials') {
    checkApp(ctx);
    return { access_token: `${world.config.appId}|${world.config.appSecret}`, token_type: 'bearer' };
  }
  checkApp(ctx);
  if (grantType === 'fb_exchange_token') {
    const short = authenticate(world, requireString(params, 'fb_exchange_token'), undefined);
    if (short.kind !== 'user') throw invalidParam('fb_exchange_token must be a user access token');
    return tokenResponse(mintUserToken(world, short.userId, short.scopes, true), world);
  }
  const code = world.store.codes.get(requireString(params, 'code'));
  const redirectUri = requireString(params, 'redirect_uri');
  if (!code) throw invalidParam('Invalid verification code format.');
  if (code.used) throw invalidParam('This authorization code has been used.', 36009);
  if (world.clock.now() - code.createdAt > CODE_TTL_MS)
    throw invalidParam('This authorization code has expired.', 36007);
  if (code.redirectUri !== redirectUri) {
    throw invalidParam(
      'Error validating verification code. Please make sure your redirect_uri is identical to the one you used in the OAuth dialog request',
      36008,
    );
  }
  code.used = true;
  return tokenResponse(mintUserToken(world, code.userId, code.scopes, false), world);
}

/** Answers 200 even for a dead token, with `is_valid: false` and the reason (facts §1.5). */
function debugToken(ctx: Ctx) {
  ctx.caller();
  const { world } = ctx;
  const token = world.store.tokens.get(requireString(ctx.params, 'input_token'));
  if (!token) {
    return {
      data: {
        is_valid: false,
        error: { code: 190, message: 'Invalid OAuth access token - Cannot parse access token' },
      },
    };
  }
  const grant = world.store.grants.get(token.userId);
  const pageIds = token.kind === 'page' && token.pageId ? [token.pageId] : (grant?.pageIds ?? []);
  const igIds = pageIds.flatMap((id) => world.store.pages.get(id)?.igId ?? []);
  const problem = tokenProblem(world, token);
  const data: Record<string, unknown> = {
    app_id: world.config.appId,
    type: token.kind === 'page' ? 'PAGE' : 'USER',
    application: world.config.appName,
    data_access_expires_at: unixSeconds(token.issuedAt) + 90 * 86400,
    expires_at: token.expiresAt === null ? 0 : unixSeconds(token.expiresAt),
    is_valid: problem === null,
    issued_at: unixSeconds(token.issuedAt),
    scopes: token.scopes,
    granular_scopes: token.scopes
      .filter((s) => s.startsWith('pages_') || s.startsWith('instagram_'))
      .map((scope) => ({ scope, target_ids: scope.startsWith('pages_') ? pageIds : igIds })),
    user_id: token.userId,
  };
  if (token.kind === 'page') data.profile_id = token.pageId;
  if (problem) {
    data.error = {
      code: problem.body.code,
      message: problem.body.message,
      subcode: problem.body.error_subcode,
    };
  }
  return { data };
}
