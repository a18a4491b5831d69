import { ID_PREFIXES } from '@svc/ids';
import fc from 'fast-check';
import {
  type Known,
  type Operation,
  type Parameter,
  plausibleOf,
  plausibleQueryValue,
  type Schema,
  unknownId,
} from './fuzz-schema.ts';

// Hostile inputs for fuzz.test.ts, with fast-check: values, bodies, queries, paths and headers.
// Most of a request is plausible (fuzz-schema.ts) and some of it hostile, so the hostile part
// reaches the code behind the checks it does not trip.

/** Mostly `undefined`: one request in `1 + rarity` carries the value. */
const sometimes = <T>(arbitrary: fc.Arbitrary<T>, rarity = 3): fc.Arbitrary<T | undefined> =>
  fc.oneof({ weight: rarity, arbitrary: fc.constant(undefined) }, { weight: 1, arbitrary });

/** The id prefix of a path parameter, from the collection before it (`/workspaces/{id}` → `ws`). */
const PREFIX_BY_COLLECTION: Record<string, string> = {
  workspaces: ID_PREFIXES.workspace,
  keys: ID_PREFIXES.apiKey,
  accounts: ID_PREFIXES.account,
  media: ID_PREFIXES.media,
  posts: ID_PREFIXES.post,
  conversations: ID_PREFIXES.conversation,
  messages: ID_PREFIXES.message,
  events: ID_PREFIXES.event,
  'embed-sessions': ID_PREFIXES.embedSession,
};

const anyPrefixId = fc.constantFrom(...Object.values(ID_PREFIXES)).chain(unknownId);

/** Strings that broke parsers, databases, templates and validators somewhere before. */
const ODD_STRINGS = [
  '',
  ' ',
  '\u0000',
  'a\u0000b',
  '\uFEFF',
  '\uD800',
  'x\uDFFFy',
  '\u202Eevil',
  'e\u0301',
  '👩‍👩‍👧‍👦',
  '\t\n\r',
  'null',
  'undefined',
  'true',
  '0',
  '-1',
  '1e309',
  'NaN',
  '../../etc/passwd',
  '%00',
  '%',
  '<script>alert(1)</script>',
  "' OR 1=1 --",
  // biome-ignore lint/suspicious/noTemplateCurlyInString: the literal text is the attack
  '${jndi:ldap://x}',
  '{{7*7}}',
  '__proto__',
  'constructor',
  'http://127.0.0.1:1/x',
  'https://a.example',
  'https://a.example/cb?x=1#f',
  'javascript:alert(1)',
  'file:///etc/passwd',
  'data:image/png;base64,AAAA',
  '2026-02-30T25:61:00Z',
  '1970-01-01T00:00:00Z',
  '9999-12-31T23:59:59.999Z',
  '2026-11-01',
  'photo_network',
  'page_network',
  'published',
  'failed',
  'dm',
  'comment',
  'inbox',
  'publish',
];

/** Percent-encoded, lone surrogates first made U+FFFD (`encodeURIComponent` throws on them). */
export const encoded = (text: string) => encodeURIComponent(Buffer.from(text, 'utf8').toString('utf8'));

/** Free text: ASCII, any code point (lone surrogates too), graphemes, the odd strings, ids, long runs. */
export function textOf(known: Known): fc.Arbitrary<string> {
  const realIds = Object.values(known.ids).flat();
  return fc.oneof(
    { weight: 4, arbitrary: fc.string() },
    { weight: 2, arbitrary: fc.string({ unit: 'binary' }) },
    { weight: 2, arbitrary: fc.string({ unit: 'grapheme' }) },
    { weight: 4, arbitrary: fc.constantFrom(...ODD_STRINGS) },
    { weight: 2, arbitrary: realIds.length > 0 ? fc.constantFrom(...realIds) : anyPrefixId },
    { weight: 1, arbitrary: anyPrefixId },
    {
      weight: 1,
      arbitrary: fc
        .tuple(fc.integer({ min: 256, max: 70_000 }), fc.constantFrom('x', 'é', '😀', '\u0000', ' '))
        .map(([n, c]) => c.repeat(n)),
    },
  );
}

const POLLUTING_KEYS = ['__proto__', 'constructor', 'prototype', 'toString', 'hasOwnProperty', 'then', ''];

/** Objects that pollute a prototype when a parser or a merge is careless. */
const POLLUTING_TEXTS = [
  '{"__proto__":{"polluted":"yes"}}',
  '{"constructor":{"prototype":{"polluted":"yes"}}}',
  '{"__proto__":null}',
  '{"a":1,"__proto__":[1,2]}',
];

const numberText = fc.oneof(
  fc.integer().map(String),
  fc.double({ noNaN: true, noDefaultInfinity: true }).map((n) => JSON.stringify(n)),
  fc.constantFrom('1e309', '-0', '123456789012345678901234567890', '0.1e-400', '1E+2', '9007199254740993'),
);

/** Arrays or objects nested thousands deep (recursive validators and walkers blow their stack). */
const deepText = fc
  .tuple(fc.integer({ min: 50, max: 20_000 }), fc.boolean())
  .map(([depth, arrays]) =>
    arrays ? '['.repeat(depth) + ']'.repeat(depth) : `${'{"a":'.repeat(depth)}1${'}'.repeat(depth)}`,
  );

/** Any JSON value as text, including what `JSON.stringify` cannot make (deep nesting, polluting keys). */
export function valueTextOf(known: Known): fc.Arbitrary<string> {
  const text = textOf(known);
  const key = fc.oneof(
    { weight: 3, arbitrary: text },
    { weight: 1, arbitrary: fc.constantFrom(...POLLUTING_KEYS) },
  );
  const scalar = fc.oneof(
    { weight: 5, arbitrary: text.map((s) => JSON.stringify(s)) },
    { weight: 2, arbitrary: numberText },
    { weight: 1, arbitrary: fc.constantFrom('true', 'false', 'null') },
  );
  const { value } = fc.letrec<{ value: string }>((tie) => ({
    value: fc.oneof(
      { depthSize: 'small', withCrossShrink: true },
      { weight: 6, arbitrary: scalar },
      {
        weight: 1,
        arbitrary: fc.array(tie('value'), { maxLength: 5 }).map((items) => `[${items.join(',')}]`),
      },
      {
        weight: 1,
        arbitrary: fc
          .array(fc.tuple(key, tie('value')), { maxLength: 5 })
          .map((entries) => `{${entries.map(([k, v]) => `${JSON.stringify(k)}:${v}`).join(',')}}`),
      },
      { weight: 1, arbitrary: fc.constantFrom(...POLLUTING_TEXTS) },
    ),
  }));
  return fc.oneof({ weight: 12, arbitrary: value }, { weight: 1, arbitrary: deepText });
}

/**
 * An object of the schema's properties, each plausible or (one in five) hostile, now and then
 * with a stray or polluting key: mostly one thing wrong at a time.
 */
export function objectTextOf(schema: Schema, known: Known): fc.Arbitrary<string> {
  const hostile = valueTextOf(known);
  const required = schema.required ?? [];
  const entries = Object.entries(schema.properties ?? {}).map(([name, property]) =>
    fc
      .option(
        fc.oneof(
          { weight: 4, arbitrary: plausibleOf(property, name, known) },
          { weight: 1, arbitrary: hostile },
        ),
        { nil: undefined, freq: required.includes(name) ? 10 : 2 },
      )
      .map((value) => (value === undefined ? undefined : `${JSON.stringify(name)}:${value}`)),
  );
  const strayKey = fc.oneof(fc.constantFrom(...POLLUTING_KEYS), textOf(known));
  const stray = sometimes(
    fc.tuple(strayKey, hostile).map(([k, v]) => `${JSON.stringify(k)}:${v}`),
    6,
  );
  return fc
    .tuple(fc.tuple(...entries), stray)
    .map(([list, extra]) => `{${[...list, extra].filter((e) => e !== undefined).join(',')}}`);
}

/** Bytes that are not JSON, or are JSON in a way a lenient reader would misread. */
const BROKEN_BODIES = [
  '{',
  '{"a":',
  '[1,]',
  "{'a':1}",
  '\uFEFF{}',
  '{"a":1}{"b":2}',
  '',
  ' ',
  'null',
  '1e999999',
  '"\\ud800"',
  '{"a":"\\u0000"}',
  'name=x&label=y',
  '--x\r\nContent-Disposition: form-data; name="file"; filename="a.png"\r\n\r\nAAAA\r\n--x--\r\n',
];

/** Over the 1 MiB body limit. */
const HUGE_BODY = `{"name":"${'x'.repeat(1_100_000)}"}`;

/** A request body (or none) for an operation with that body schema (or none). */
export function bodyOf(schema: Schema | undefined, known: Known): fc.Arbitrary<string | undefined> {
  return fc.oneof(
    { weight: schema ? 24 : 0, arbitrary: objectTextOf(schema ?? {}, known) },
    { weight: 2, arbitrary: valueTextOf(known) },
    { weight: 1, arbitrary: fc.json() },
    { weight: 1, arbitrary: fc.oneof(fc.constantFrom(...BROKEN_BODIES), fc.string({ unit: 'binary' })) },
    { weight: schema ? 1 : 24, arbitrary: fc.constant(undefined) },
    { weight: 1, arbitrary: fc.constant(HUGE_BODY) },
  );
}

/** Names that mean something to a query parser (arrays, objects, prototypes). */
const QUERY_NAMES = ['limit[]', 'page[0]', 'a[b]', '__proto__', 'constructor', '__proto__[polluted]', ''];

/**
 * `?a=1&b=2`: the operation's parameters, each plausible or hostile, then now and then a repeated
 * or unknown one, a raw (not percent-encoded) pair, or a broken end.
 */
export function queryOf(parameters: Parameter[], known: Known): fc.Arbitrary<string> {
  const text = textOf(known);
  const hostile = text.map((s) => s.slice(0, 6_000));
  const pairs = parameters.map((parameter) =>
    fc
      .option(
        fc.oneof(
          { weight: 4, arbitrary: plausibleQueryValue(parameter, known) },
          { weight: 1, arbitrary: hostile },
        ),
        { nil: undefined, freq: 2 },
      )
      .map((value) => (value === undefined ? undefined : `${encoded(parameter.name)}=${encoded(value)}`)),
  );
  const names = parameters.map((p) => p.name);
  const strayName = fc.oneof(
    { weight: names.length ? 2 : 0, arbitrary: fc.constantFrom(...(names.length ? names : [''])) },
    { weight: 1, arbitrary: fc.constantFrom(...QUERY_NAMES) },
    { weight: 1, arbitrary: text },
  );
  // Raw: the URL parser percent-encodes what it must and keeps broken escapes (`%zz`) as they are.
  const stray = sometimes(
    fc
      .tuple(strayName, hostile, fc.boolean())
      .map(([n, v, raw]) => (raw ? `${n}=${v}` : `${encoded(n)}=${encoded(v)}`)),
    4,
  );
  const tail = fc.oneof(
    { weight: 12, arbitrary: fc.constant('') },
    { weight: 1, arbitrary: fc.constantFrom('&', '&&=', '%zz', '%', '=', '#frag') },
  );
  return fc.tuple(fc.tuple(...pairs), stray, tail).map(([list, extra, end]) => {
    const all = [...list, extra].filter((p) => p !== undefined);
    return all.length || end ? `?${all.join('&')}${end}` : '';
  });
}

/** What goes in a path segment that should hold an id. */
const GARBAGE_SEGMENTS = [
  '%',
  '%E0%A4%A',
  '%00',
  '..',
  '.',
  '%2F',
  '%2e%2e',
  ' ',
  ';',
  ':id',
  '{id}',
  '-1',
  'a'.repeat(300),
];

/**
 * The path with its `{params}` filled: the real id of that kind (not for DELETE: the fuzz must not
 * delete what later runs use), an unknown id of that kind, an id of another kind, or garbage.
 */
export function pathOf(op: Operation, known: Known): fc.Arbitrary<string> {
  const segments = op.path.split('/');
  // A DELETE never names a real object, not even as free text (it deleted the fuzz workspace once).
  const pool: Known = op.method === 'DELETE' ? { ids: {} } : known;
  const parts = segments.map((segment, index) => {
    if (!segment.startsWith('{')) return fc.constant(segment);
    const prefix = PREFIX_BY_COLLECTION[segments[index - 1] ?? ''];
    const real = prefix ? (pool.ids[prefix] ?? []) : [];
    return fc.oneof(
      { weight: real.length ? 8 : 0, arbitrary: fc.constantFrom(...(real.length ? real : ['x'])) },
      { weight: prefix ? 4 : 0, arbitrary: unknownId(prefix ?? 'x') },
      { weight: 1, arbitrary: anyPrefixId },
      { weight: 1, arbitrary: fc.constantFrom(...GARBAGE_SEGMENTS) },
      {
        weight: 1,
        arbitrary: textOf(pool)
          .filter((s) => s !== '')
          .map((s) => encoded(s.slice(0, 400))),
      },
    );
  });
  return fc.tuple(...parts).map((filled) => filled.join('/'));
}

/**
 * A header value from any text: its UTF-8 bytes as latin1 characters (what goes on the wire),
 * without the control bytes the HTTP client refuses to send (envelope.test.ts sends those raw).
 */
const headerValue = (text: string) =>
  Buffer.from(text, 'utf8')
    .toString('latin1')
    .replace(/[^\t\x20-\x7e\x80-\xff]/g, '')
    .slice(0, 4_000);

function headerTextOf(known: Known): fc.Arbitrary<string> {
  return textOf(known).map(headerValue);
}

/** `Authorization`: mostly the caller's right credential, else every way a credential can be wrong. */
export function authorizationOf(
  right: string,
  others: string[],
  known: Known,
): fc.Arbitrary<string | undefined> {
  const wrong = [
    undefined,
    '',
    'Bearer',
    'Bearer ',
    `bearer ${right}`,
    `Bearer  ${right}`,
    `Bearer ${right} `,
    `Basic ${Buffer.from(`user:${right}`).toString('base64')}`,
    `Bearer ${right}x`,
    `Bearer ${right.slice(0, -1)}`,
    `Bearer ${right}, Bearer ${right}`,
    `Bearer svc_live_${'a'.repeat(40)}`,
    `Bearer sve_${'a'.repeat(40)}`,
    `Bearer ${'a'.repeat(201)}`,
    `Token ${right}`,
  ];
  return fc.oneof(
    { weight: 40, arbitrary: fc.constant(`Bearer ${right}`) },
    {
      weight: others.length ? 2 : 0,
      arbitrary: fc.constantFrom(...(others.length ? others : [''])).map((t) => `Bearer ${t}`),
    },
    { weight: 3, arbitrary: fc.constantFrom(...wrong) },
    { weight: 1, arbitrary: headerTextOf(known).map((t) => `Bearer ${t}`) },
  );
}

const CONTENT_TYPES = [
  'application/json; charset=utf-8',
  'application/JSON',
  'application/json; charset=latin1',
  'application/json;;',
  'application/merge-patch+json',
  'text/plain',
  'text/html',
  'application/x-www-form-urlencoded',
  'multipart/form-data; boundary=x',
  'multipart/form-data',
  'application/xml',
  '',
  '/;;',
  '*/*',
];

const ACCEPTS = [
  'application/json',
  'text/html',
  '*/*',
  '',
  'application/xml',
  'text/event-stream',
  'application/json, text/event-stream',
];
const ORIGINS = ['https://a.example', 'null', 'https://evil.example', 'http://127.0.0.1', 'file://'];
const FORWARDED = [
  '1.2.3.4',
  '127.0.0.1',
  '::1',
  '1.2.3.4, 5.6.7.8',
  'unknown',
  '999.999.999.999',
  '1.1.1.1, '.repeat(200),
];

/** Headers sent with every request: the caller's, then any of the optional ones, some sent twice. */
export interface HeaderPlan {
  authorization: fc.Arbitrary<string | undefined>;
  hasBody: boolean;
  /** Extra headers this surface reads, by name (X-Service-Workspace, MCP-Protocol-Version...). */
  extra?: Record<string, fc.Arbitrary<string>>;
  /** The Accept most of its clients send. */
  accept?: string;
}

export function headersOf(plan: HeaderPlan, known: Known): fc.Arbitrary<[string, string][]> {
  const odd = headerTextOf(known);
  const extra = Object.entries(plan.extra ?? {}).map(([name, value]) =>
    fc
      .option(fc.oneof({ weight: 4, arbitrary: value }, { weight: 1, arbitrary: odd }), {
        nil: undefined,
        freq: 2,
      })
      .map((v) => (v === undefined ? undefined : ([name, v] as [string, string]))),
  );
  return fc
    .record({
      authorization: plan.authorization,
      contentType: plan.hasBody
        ? fc.oneof(
            { weight: 30, arbitrary: fc.constant('application/json') },
            { weight: 2, arbitrary: fc.constantFrom(...CONTENT_TYPES) },
            { weight: 1, arbitrary: odd },
            { weight: 1, arbitrary: fc.constant(undefined) },
          )
        : sometimes(fc.constantFrom(...CONTENT_TYPES), 8),
      idempotencyKey: sometimes(
        fc.oneof(
          { weight: 3, arbitrary: fc.uuid() },
          { weight: 1, arbitrary: odd },
          { weight: 1, arbitrary: fc.constantFrom('', 'k'.repeat(300), 'k'.repeat(3_000)) },
        ),
      ),
      accept: fc.oneof(
        { weight: 10, arbitrary: fc.constant(plan.accept) },
        { weight: 1, arbitrary: fc.constantFrom(...ACCEPTS) },
        { weight: 1, arbitrary: odd },
      ),
      origin: sometimes(fc.oneof(fc.constantFrom(...ORIGINS), odd), 5),
      forwardedFor: sometimes(fc.oneof(fc.constantFrom(...FORWARDED), odd), 5),
      requestId: sometimes(odd, 6),
      // Read by /mcp alone (where the plan sends it as its document says); elsewhere, ignored.
      workspace:
        'x-service-workspace' in (plan.extra ?? {})
          ? fc.constant(undefined)
          : sometimes(fc.oneof(fc.constantFrom(...(known.ids.ws ?? ['ws_x'])), odd), 5),
      extra: fc.tuple(...extra),
      twice: sometimes(
        fc.subarray(['idempotency-key', 'x-service-workspace', 'accept', 'x-forwarded-for', 'x-request-id']),
        6,
      ),
    })
    .map((h) => {
      const list: [string, string | undefined][] = [
        ['authorization', h.authorization],
        ['content-type', h.contentType],
        ['idempotency-key', h.idempotencyKey],
        ['accept', h.accept],
        ['origin', h.origin],
        ['x-forwarded-for', h.forwardedFor],
        ['x-request-id', h.requestId],
        ['x-service-workspace', h.workspace],
        ...h.extra.filter((e): e is [string, string] => e !== undefined),
      ];
      const present = list.filter((entry): entry is [string, string] => entry[1] !== undefined);
      const repeated = present.filter(([name]) => h.twice?.includes(name));
      return [...present, ...repeated];
    });
}
