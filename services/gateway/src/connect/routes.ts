import type { ConnectOutcome } from '@svc/contracts';
import { ServiceError } from '@svc/errors';
import type { FastifyInstance, FastifyReply, FastifyRequest } from 'fastify';
import { retryAfterSeconds } from '../auth/authenticate.ts';
import type { Limiter } from '../auth/limiter.ts';
import type { AccountsClient } from '../clients.ts';
import { clientKey } from '../http/client-address.ts';
import { toServiceError } from '../http/errors.ts';
import { bindingCookie, bindingCookieName, spentBindingCookie } from './browser-binding.ts';
import { PAGE_CSP } from './html.ts';
import { connectPage, messagePage, pickerPage, resultPage } from './pages.ts';
import { CONNECT_CSS } from './style.ts';

/**
 * The hosted connect flow's unauthenticated endpoints, at /connect and mirrored at /v1/connect:
 * the page, start (302 to the consent dialog), the OAuth callback, the page picker and
 * disconnect. Every answer is a page (never JSON), limited per IP address.
 */
export const CONNECT_PREFIXES = ['/connect', '/v1/connect'];

/** Remembers which link the browser came from, to offer "back to the connect page" on return. */
const LINK_COOKIE = 'svc_connect_link';
/** Set when the widget opened the flow in a popup (`start?popup=1`): the last page closes itself. */
const POPUP_COOKIE = 'svc_connect_popup';
/** The last page of a popup flow runs this one script of ours (the result already reached the widget). */
const CLOSE_SCRIPT = 'window.close();\n';
const POPUP_CSP = PAGE_CSP.replace("default-src 'none';", "default-src 'none'; script-src 'self';");

export interface ConnectDeps {
  accounts: AccountsClient;
  limiter: Limiter;
  limitPerMinute: number;
}

export function connectRoutes(deps: ConnectDeps) {
  return async (scope: FastifyInstance, options: { prefix?: string }) => {
    const base = options.prefix ?? '/connect';
    scope.addContentTypeParser(
      'application/x-www-form-urlencoded',
      { parseAs: 'string' },
      (_request, body, done) => done(null, new URLSearchParams(String(body))),
    );
    scope.addHook('onRequest', async (request, reply) => {
      reply.header('Content-Security-Policy', PAGE_CSP);
      reply.header('X-Content-Type-Options', 'nosniff');
      reply.header('Referrer-Policy', 'no-referrer');
      reply.header('Cache-Control', 'no-store');
      const limit = await deps.limiter.limitByIp(clientKey(request), deps.limitPerMinute);
      if (!limit.allowed) {
        reply.header('Retry-After', String(retryAfterSeconds(limit)));
        return sendPage(
          reply,
          429,
          messagePage(
            base,
            'Too many requests',
            `This address made more than ${limit.limit} requests in a minute. Wait ${retryAfterSeconds(limit)} seconds, then try again.`,
          ),
        );
      }
    });
    scope.setErrorHandler((error, request, reply) => {
      // The framework's refusals (a malformed or oversized form, a wrong Content-Type) are the
      // same 400s as on the API, shown as a page.
      const [status, title, message] = describeError(toServiceError(error as Error));
      if (status >= 500) request.log.error({ err: error }, 'connect page failed');
      return sendPage(reply, status, messagePage(base, title, message));
    });

    scope.get('/assets/connect.css', async (_request, reply) =>
      reply.type('text/css; charset=utf-8').header('Cache-Control', 'public, max-age=3600').send(CONNECT_CSS),
    );

    scope.get<{ Params: { token: string }; Querystring: { notice?: string } }>(
      '/:token',
      async (request, reply) => {
        const token = request.params.token;
        const page = await deps.accounts.getConnectPage({ linkToken: token });
        if (page.linkState !== 'open') return sendPage(reply, ...linkProblem(base, page.linkState));
        return sendPage(
          reply,
          200,
          connectPage({
            base,
            token,
            workspaceName: page.workspaceName,
            networks: page.networks,
            accounts: page.accounts,
            expiresAt: page.expiresAt,
            notice: noticeText(request.query.notice),
          }),
        );
      },
    );

    scope.get('/assets/close.js', async (_request, reply) =>
      reply
        .type('text/javascript; charset=utf-8')
        .header('Cache-Control', 'public, max-age=3600')
        .send(CLOSE_SCRIPT),
    );

    scope.get<{ Params: { token: string; provider: string }; Querystring: { popup?: string } }>(
      '/:token/:provider/start',
      async (request, reply) => {
        const started = await deps.accounts.startConnect({
          linkToken: request.params.token,
          network: request.params.provider,
        });
        const secure = request.protocol === 'https' ? '; Secure' : '';
        const cookie = `Path=${base}; Max-Age=3600; HttpOnly; SameSite=Lax${secure}`;
        reply.header('Set-Cookie', [
          bindingCookie(started),
          `${LINK_COOKIE}=${encodeURIComponent(request.params.token)}; ${cookie}`,
          request.query.popup === '1'
            ? `${POPUP_COOKIE}=1; ${cookie}`
            : `${POPUP_COOKIE}=; Path=${base}; Max-Age=0`,
        ]);
        return reply.redirect(started.dialogUrl, 302);
      },
    );

    scope.get<{ Querystring: Record<string, string | string[] | undefined> }>(
      '/oauth/callback',
      async (request, reply) => {
        const q = singleValues(request.query);
        const state = q.state ?? '';
        // The browser that started this flow brings its nonce; any other browser is refused.
        const browserNonce = state
          ? cookieValue(request.headers.cookie, bindingCookieName(state))
          : undefined;
        if (state) reply.header('Set-Cookie', spentBindingCookie(state, request.url.split('?')[0] ?? ''));
        const { outcome } = await deps.accounts.completeConnect({
          state,
          code: q.code ?? '',
          error: q.error ?? '',
          browserNonce: browserNonce ?? '',
        });
        return answerOutcome(request, reply, base, outcome as ConnectOutcome);
      },
    );

    scope.post<{ Body: URLSearchParams }>('/oauth/pages', async (request, reply) => {
      const form = formOf(request.body);
      const { outcome } = await deps.accounts.choosePages({
        choiceId: form.get('choice_id') ?? '',
        pageIds: form.getAll('page_id'),
      });
      return answerOutcome(request, reply, base, outcome as ConnectOutcome);
    });

    scope.post<{ Params: { token: string; account: string } }>(
      '/:token/accounts/:account/disconnect',
      async (request, reply) => {
        const { token, account } = request.params;
        await deps.accounts.disconnectFromPage({ linkToken: token, accountId: account });
        // 303: the browser follows with a GET, so reloading the page does not post again.
        return reply.redirect(`${base}/${encodeURIComponent(token)}?notice=disconnected`, 303);
      },
    );
  };
}

function answerOutcome(request: FastifyRequest, reply: FastifyReply, base: string, outcome: ConnectOutcome) {
  if (outcome.status === 'choose_pages') {
    const problem = outcome.problems[0]?.message;
    return sendPage(reply, problem ? 400 : 200, pickerPage({ base, outcome, problem }));
  }
  const settled = outcome.status === 'connected' || outcome.status === 'denied';
  if (settled && cookieValue(request.headers.cookie, POPUP_COOKIE) === '1') {
    reply.header('Content-Security-Policy', POPUP_CSP);
    return sendPage(reply, 200, resultPage({ base, outcome, closeScript: `${base}/assets/close.js` }));
  }
  const continueUrl = outcome.redirectUrl ? partnerReturnUrl(outcome) : undefined;
  // Straight back to the partner when there is nothing to explain.
  if (continueUrl && (outcome.status === 'connected' || outcome.status === 'denied'))
    return reply.redirect(continueUrl, 302);
  const token = cookieValue(request.headers.cookie, LINK_COOKIE);
  const backUrl = token ? `${base}/${encodeURIComponent(token)}` : undefined;
  const status = outcome.status === 'failed' ? 400 : 200;
  return sendPage(reply, status, resultPage({ base, outcome, backUrl, continueUrl }));
}

/** The partner's redirect_url with `status` and the connected account ids. */
function partnerReturnUrl(outcome: ConnectOutcome): string {
  const url = new URL(outcome.redirectUrl);
  url.searchParams.set('status', outcome.status);
  url.searchParams.set('accounts', outcome.accounts.map((a) => a.id).join(','));
  return url.toString();
}

function sendPage(reply: FastifyReply, status: number, page: string) {
  return reply.code(status).type('text/html; charset=utf-8').send(page);
}

function linkProblem(base: string, state: string): [number, string] {
  return state === 'expired'
    ? [
        410,
        messagePage(
          base,
          'This link has expired',
          'Connect links can be used for a limited time. Ask the service that sent it for a new one.',
        ),
      ]
    : [
        404,
        messagePage(
          base,
          'This link is not valid',
          'Check that the address is complete, or ask the service that sent it for a new link.',
        ),
      ];
}

function describeError(error: unknown): [number, string, string] {
  if (!(error instanceof ServiceError)) return [500, 'Something went wrong', 'Please try again in a moment.'];
  switch (error.code) {
    case 'not_found':
      return [404, 'This link is not valid', 'Check that the address is complete, or ask for a new link.'];
    case 'conflict':
      return [410, 'This link has expired', 'Ask the service that sent it for a new one.'];
    case 'validation_error':
      return [400, 'This address is not valid', error.message];
    case 'service_unavailable':
      return [503, 'Temporarily unavailable', 'Please try again in a moment.'];
    default:
      return [502, 'The connection did not work', 'Please try again in a moment.'];
  }
}

/** A query as single strings: a repeated parameter (`state=a&state=b`) counts as absent. */
function singleValues(
  query: Record<string, string | string[] | undefined>,
): Record<string, string | undefined> {
  return Object.fromEntries(
    Object.entries(query).map(([name, value]) => [name, typeof value === 'string' ? value : undefined]),
  );
}

const NOTICES: Record<string, string> = { disconnected: 'The account was disconnected.' };
const noticeText = (key: string | undefined) => (key ? NOTICES[key] : undefined);

function formOf(body: unknown): URLSearchParams {
  return body instanceof URLSearchParams ? body : new URLSearchParams();
}

function cookieValue(header: string | undefined, name: string): string | undefined {
  for (const part of header?.split(';') ?? []) {
    const [key, ...rest] = part.trim().split('=');
    if (key === name) return decodedOrUndefined(rest.join('='));
  }
  return undefined;
}

/** A malformed escape in a cookie is the browser's own doing: read as no cookie, not a 500. */
function decodedOrUndefined(value: string): string | undefined {
  try {
    return decodeURIComponent(value);
  } catch {
    return undefined;
  }
}
