import { createHmac } from 'node:crypto';
import fc from 'fast-check';
import {
  authorizationOf,
  bodyOf,
  encoded,
  type HeaderPlan,
  headersOf,
  queryOf,
  textOf,
  valueTextOf,
} from './fuzz-inputs.ts';
import { type Property, request } from './fuzz-requests.ts';
import { type Known, parameters, type Schema, strings } from './fuzz-schema.ts';

// The routes outside the OpenAPI document, for fuzz.test.ts: the hosted connect pages, the
// widget's page and loader, Meta's callbacks and the signed media URLs, one property per route.

/** The sandbox's defaults, which the stack's gateway runs with (config.ts). */
export const META_APP_SECRET = 'sandbox-app-secret-0123456789abcdef';
const META_VERIFY_TOKEN = 'sandbox-verify-token';
/** Stand-ins the sender replaces just before sending (a fresh OAuth state, a valid signature). */
export const FRESH_STATE = 'FRESH_STATE';
export const SIGN = 'SIGN';

/** What the routes are fuzzed with: the stack's ids and credentials, and runs per property. */
export interface Stage {
  known: Known;
  partnerKey: string;
  sessionKey: string;
  /** The token of a live connect link of the fuzz workspace. */
  linkToken: string;
  runs: number;
}

export function unversionedProperties(stage: Stage): Property[] {
  return [
    ...connectProperties(stage),
    ...widgetProperties(stage),
    ...metaProperties(stage),
    ...mediaFileProperties(stage),
  ];
}

/** What Meta posts to the webhook (facts §5): entries of messaging events or field changes. */
const META_EVENT: Schema = {
  type: 'object',
  required: ['object', 'entry'],
  properties: {
    object: { enum: ['page', 'instagram', 'user'] },
    entry: {
      type: 'array',
      items: {
        type: 'object',
        properties: {
          id: { type: 'string' },
          time: { type: 'integer' },
          messaging: { type: 'array', items: { type: 'object' } },
          changes: {
            type: 'array',
            items: {
              type: 'object',
              properties: { field: { enum: ['comments', 'feed', 'messages'] }, value: { type: 'object' } },
            },
          },
        },
      },
    },
  },
};

/** Headers of a browser or of Meta: no API key (sometimes one anyway), the usual optional ones. */
function unauthenticatedHeaders(stage: Stage, hasBody: boolean, extra: HeaderPlan['extra'] = {}) {
  const { known } = stage;
  const authorization = fc.oneof(
    { weight: 6, arbitrary: fc.constant(undefined) },
    { weight: 1, arbitrary: authorizationOf(stage.partnerKey, [stage.sessionKey], known) },
  );
  return headersOf({ authorization, hasBody, extra, accept: 'text/html' }, known);
}

/** A path segment where a token or id goes: the real one, an odd one, or anything encoded. */
function segment(stage: Stage, real: string[]): fc.Arbitrary<string> {
  return fc.oneof(
    { weight: real.length ? 4 : 0, arbitrary: fc.constantFrom(...(real.length ? real : ['x'])) },
    { weight: 1, arbitrary: fc.constantFrom('%', '%E0%A4%A', '%00', '..', 'a'.repeat(300), 'x.y-z_1') },
    {
      weight: 2,
      arbitrary: textOf(stage.known)
        .filter((s) => s !== '')
        .map((s) => encoded(s.slice(0, 300))),
    },
  );
}

/** A Cookie header for the connect flow's two cookies, with values a browser could not have set. */
function connectCookie(stage: Stage): fc.Arbitrary<string> {
  const { known, linkToken } = stage;
  const value = fc.oneof(
    fc.constantFrom('1', '', '%', '%E0%A4%A', '%zz', linkToken),
    textOf(known).map((s) => encoded(s.slice(0, 200))),
  );
  return fc
    .tuple(fc.option(value, { nil: undefined }), fc.option(value, { nil: undefined }))
    .map(([link, popup]) =>
      [
        link === undefined ? '' : `svc_connect_link=${link}`,
        popup === undefined ? '' : `svc_connect_popup=${popup}`,
      ]
        .filter(Boolean)
        .join('; '),
    );
}

/** The hosted connect flow at /connect and /v1/connect, one property per route. */
function connectProperties(stage: Stage): Property[] {
  const { known, linkToken, runs } = stage;
  const prefix = fc.constantFrom('/connect', '/v1/connect');
  const token = segment(stage, [linkToken]);
  const headers = (hasBody: boolean) =>
    unauthenticatedHeaders(stage, hasBody, { cookie: connectCookie(stage) });
  const callbackQuery = queryOf(
    parameters('state', 'code', 'error', 'error_reason', 'error_description'),
    known,
  );
  // A state the accounts service issued, so the outcome pages (and the cookies they read) are reached.
  const withFreshState = callbackQuery.map(
    (query) => `${query}${query ? '&' : '?'}state=${FRESH_STATE}&error=access_denied`,
  );
  const form = fc
    .array(fc.tuple(fc.constantFrom('choice_id', 'page_id', 'x'), textOf(known)), { maxLength: 5 })
    .map((pairs) => new URLSearchParams(pairs).toString());
  return [
    [
      'GET /connect/{token}',
      request('connect', 'GET', {
        path: fc.tuple(prefix, token).map((p) => p.join('/')),
        query: queryOf(parameters('notice'), known),
        headers: headers(false),
      }),
    ],
    [
      'GET /connect/{token}/{provider}/start',
      request('connect', 'GET', {
        path: fc
          .tuple(
            prefix,
            token,
            fc.oneof(fc.constantFrom('photo_network', 'page_network'), segment(stage, [])),
          )
          .map(([p, t, provider]) => `${p}/${t}/${provider}/start`),
        query: queryOf(parameters('popup'), known),
        headers: headers(false),
      }),
    ],
    [
      'GET /connect/oauth/callback',
      request('connect', 'GET', {
        path: prefix.map((p) => `${p}/oauth/callback`),
        query: fc.oneof(callbackQuery, withFreshState),
        headers: headers(false),
      }),
    ],
    [
      'POST /connect/oauth/pages',
      request('connect', 'POST', {
        path: prefix.map((p) => `${p}/oauth/pages`),
        query: fc.constant(''),
        headers: headers(true),
        body: fc.oneof(form, bodyOf(strings('choice_id', 'page_id'), known)),
      }),
    ],
    [
      'POST /connect/{token}/accounts/{account}/disconnect',
      request('connect', 'POST', {
        path: fc
          .tuple(prefix, token, segment(stage, []))
          .map(([p, t, a]) => `${p}/${t}/accounts/${a}/disconnect`),
        query: fc.constant(''),
        headers: headers(true),
        body: bodyOf(undefined, known),
      }),
    ],
    [
      'GET /connect/assets/*',
      request('connect', 'GET', {
        path: fc
          .tuple(prefix, fc.constantFrom('connect.css', 'close.js', 'x.js'))
          .map(([p, a]) => `${p}/assets/${a}`),
        query: queryOf([], known),
        headers: headers(false),
      }),
      runs / 2,
    ],
  ];
}

/** The widget's iframe page and its loader. */
function widgetProperties(stage: Stage): Property[] {
  const { known, runs } = stage;
  return [
    [
      'GET /embed/app',
      request('widget', 'GET', {
        path: fc.constant('/embed/app'),
        query: fc.oneof(
          queryOf(parameters('session'), known),
          segment(stage, known.ids.emb ?? []).map((s) => `?session=${s}`),
        ),
        headers: unauthenticatedHeaders(stage, false, { referer: fc.constant('https://a.example/') }),
      }),
    ],
    [
      'GET /embed/widget.js',
      request('widget', 'GET', {
        path: fc.constant('/embed/widget.js'),
        query: queryOf([], known),
        headers: unauthenticatedHeaders(stage, false, {
          'if-none-match': fc.constantFrom('"1"', '*', 'W/"x"'),
        }),
      }),
      runs / 2,
    ],
  ];
}

/** Meta's callbacks: the subscription handshake, signed (and unsigned) events, deauthorization. */
function metaProperties(stage: Stage): Property[] {
  const { known } = stage;
  const hubQuery = queryOf(
    [
      { name: 'hub.mode', schema: { enum: ['subscribe', 'unsubscribe'] } },
      { name: 'hub.verify_token', schema: { enum: [META_VERIFY_TOKEN, 'wrong'] } },
      { name: 'hub.challenge', schema: { type: 'string' } },
    ],
    known,
  );
  const handshake = fc
    .tuple(hubQuery, fc.boolean(), textOf(known))
    .map(([query, valid, challenge]) =>
      valid
        ? `?hub.mode=subscribe&hub.verify_token=${META_VERIFY_TOKEN}&hub.challenge=${encoded(challenge.slice(0, 500))}`
        : query,
    );
  const signature = fc.oneof(
    { weight: 3, arbitrary: fc.constant(SIGN) },
    { weight: 1, arbitrary: fc.constantFrom('sha256=', 'sha256=00', `sha1=${'0'.repeat(40)}`, 'SHA256=x') },
  );
  // Signed with the app secret (or not): a valid signature over any payload reaches accounts.
  const signedRequest = fc.tuple(valueTextOf(known), fc.boolean()).map(([payload, valid]) => {
    const body = Buffer.from(payload, 'utf8').toString('base64url');
    const mac = createHmac('sha256', valid ? META_APP_SECRET : 'wrong')
      .update(body)
      .digest('base64url');
    return `signed_request=${mac}.${body}`;
  });
  return [
    [
      'GET /webhooks/meta',
      request('meta', 'GET', {
        path: fc.constant('/webhooks/meta'),
        query: handshake,
        headers: unauthenticatedHeaders(stage, false),
      }),
    ],
    [
      'POST /webhooks/meta',
      request('meta', 'POST', {
        path: fc.constant('/webhooks/meta'),
        query: fc.constant(''),
        headers: unauthenticatedHeaders(stage, true, { 'x-hub-signature-256': signature }),
        body: bodyOf(META_EVENT, known),
      }),
    ],
    [
      'POST /webhooks/meta/deauthorize',
      request('meta', 'POST', {
        path: fc.constant('/webhooks/meta/deauthorize'),
        query: fc.constant(''),
        headers: unauthenticatedHeaders(stage, true),
        body: fc.oneof(signedRequest, bodyOf(strings('signed_request'), known)),
      }),
    ],
  ];
}

/** Signed media URLs the networks fetch: the token is the credential. */
function mediaFileProperties(stage: Stage): Property[] {
  const { known } = stage;
  const token = fc.oneof(
    fc.string({ unit: fc.constantFrom(...'AZaz09._-'.split('')), minLength: 1, maxLength: 100 }),
    segment(stage, []),
  );
  return [
    [
      'GET /media-files/{token}',
      request('media-files', 'GET', {
        path: token.map((t) => `/media-files/${t}`),
        query: queryOf([], known),
        headers: unauthenticatedHeaders(stage, false),
      }),
    ],
  ];
}
