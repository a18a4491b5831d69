import { ERROR_CODES, HTTP_STATUS } from '@svc/errors';
import fc from 'fast-check';

// What a fuzzed request is (fuzz.test.ts) and the rules its answer keeps: below 500 (a 502
// network_error where the document lists it aside), no stack trace, and every JSON refusal
// exactly the spec's envelope (section 7).

export type Surface = 'rest' | 'embed' | 'mcp' | 'connect' | 'widget' | 'meta' | 'media-files';
/** Surfaces whose every refusal is JSON (the hosted pages answer HTML, Meta's handshake text). */
const JSON_SURFACES: Surface[] = ['rest', 'embed', 'media-files'];

export interface FuzzRequest {
  surface: Surface;
  method: string;
  /** Path and query. */
  url: string;
  headers: [string, string][];
  body?: string;
  /** The document lists a 502 for it (a call to the network provider). */
  may502: boolean;
}

/** A named generator of requests, with its number of runs when not RUNS. */
export type Property = [name: string, requests: fc.Arbitrary<FuzzRequest>, runs?: number];

/** A generated request of one surface, from generated parts. */
export const request = (
  surface: Surface,
  method: string,
  parts: {
    path: fc.Arbitrary<string>;
    query: fc.Arbitrary<string>;
    headers: fc.Arbitrary<[string, string][]>;
    body?: fc.Arbitrary<string | undefined>;
  },
): fc.Arbitrary<FuzzRequest> =>
  fc
    .record({
      path: parts.path,
      query: parts.query,
      headers: parts.headers,
      body: parts.body ?? fc.constant(undefined),
    })
    .map(({ path, query, headers, body }) => ({
      surface,
      method,
      url: `${path}${query}`,
      headers,
      body,
      may502: false,
    }));

/** A request generator that shows long bodies and values shortened in fast-check's report. */
export function shown(arbitrary: fc.Arbitrary<FuzzRequest>): fc.Arbitrary<FuzzRequest> {
  const cut = (s: string) => (s.length > 300 ? `${s.slice(0, 300)}…(${s.length} chars)` : s);
  return arbitrary.map((request) =>
    Object.defineProperty(request, fc.toStringMethod, {
      value: () =>
        JSON.stringify({
          ...request,
          url: cut(request.url),
          headers: request.headers.map(([n, v]) => [n, cut(v)]),
          body: request.body === undefined ? undefined : cut(request.body),
        }),
    }),
  );
}

/** Spec 7's codes: service_unavailable and internal_error are ours, never a fuzzed request's answer. */
const SPEC_CODES = ERROR_CODES.filter((code) => code !== 'service_unavailable' && code !== 'internal_error');

/** What rule an answer breaks, if any (see the top of the file). */
export function ruleBroken(
  request: FuzzRequest,
  status: number,
  type: string,
  text: string,
): string | undefined {
  const json = type.startsWith('application/json') ? parseJson(text) : undefined;
  if (status >= 500) {
    const code = (json as { error?: { code?: unknown } } | undefined)?.error?.code;
    if (!(status === 502 && request.may502 && code === 'network_error')) return `a ${status}`;
  }
  if (status < 400)
    return JSON_SURFACES.includes(request.surface) && status >= 300 ? 'a redirect' : undefined;
  if (/at \S+\.[cm]?[jt]s:\d+|node_modules/.test(text)) return 'a stack trace';
  if (json === undefined)
    return JSON_SURFACES.includes(request.surface) ? 'a refusal that is not JSON' : undefined;
  if (request.surface === 'mcp' && isJsonRpc(json)) return undefined;
  return envelopeProblem(json, tusStatus(request, status, json) ?? status);
}

/**
 * tus prescribes its own statuses for some refusals (412 another protocol version, 413 a file
 * over the limit, 415 a PATCH of another type): on the upload paths these are validation errors,
 * judged as the 400 they stand for.
 */
function tusStatus(request: FuzzRequest, status: number, json: unknown): number | undefined {
  const upload = /^\/v1\/(embed\/)?uploads(\/|$|\?)/.test(request.url);
  const code = (json as { error?: { code?: unknown } } | undefined)?.error?.code;
  return upload && [412, 413, 415].includes(status) && code === 'validation_error' ? 400 : undefined;
}

function parseJson(text: string): unknown {
  try {
    return JSON.parse(text);
  } catch {
    return Symbol('not JSON');
  }
}

const isJsonRpc = (value: unknown) =>
  (Array.isArray(value) ? value : [value]).every(
    (item) => typeof item === 'object' && item !== null && 'jsonrpc' in item,
  );

/** Exactly `{ error: { code, message, field? } }` (spec 7), `details` only on network_error. */
function envelopeProblem(body: unknown, status: number): string | undefined {
  if (typeof body !== 'object' || body === null || Object.keys(body).join() !== 'error')
    return 'not the envelope';
  const error = (body as { error: Record<string, unknown> }).error;
  const allowed = ['code', 'message', 'field', 'details'];
  if (typeof error !== 'object' || error === null || Object.keys(error).some((k) => !allowed.includes(k)))
    return 'not the envelope';
  const code = error.code as (typeof SPEC_CODES)[number];
  if (!SPEC_CODES.includes(code)) return `code ${String(code)} is not the spec's`;
  if (HTTP_STATUS[code] !== status) return `code ${code} with status ${status}`;
  if (typeof error.message !== 'string' || error.message === '') return 'no message';
  if ((error.field !== undefined) !== (code === 'validation_error')) return 'field present or missing';
  if (error.field !== undefined && (typeof error.field !== 'string' || error.field === ''))
    return 'field not a name';
  if (error.details !== undefined && code !== 'network_error') return 'details outside network_error';
  return undefined;
}
