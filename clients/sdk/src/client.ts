import createFetchClient, { type FetchOptions } from 'openapi-fetch';
import { ApiError } from './api-error.ts';
import type { operations, paths } from './generated/api.ts';
import { OPERATIONS } from './generated/operations.ts';

export type OperationId = keyof typeof OPERATIONS;

/**
 * What a call takes: `params` (`path`, `query`, and `header` with `Idempotency-Key` on a POST and
 * `X-Request-Id` on any call), `body`, and any fetch option (`signal`...).
 */
export type CallOptions<K extends OperationId> = FetchOptions<operations[K]>;

type SuccessStatus = 200 | 201 | 202 | 204;

/** What a call resolves to: the body of its success answer (undefined for a 204). */
export type Result<K extends OperationId> = {
  [S in keyof operations[K]['responses']]: S extends SuccessStatus
    ? operations[K]['responses'][S] extends { content: { 'application/json': infer Body } }
      ? Body
      : undefined
    : never;
}[keyof operations[K]['responses']];

type Call<K extends OperationId> =
  Record<never, never> extends CallOptions<K>
    ? (options?: CallOptions<K>) => Promise<Result<K>>
    : (options: CallOptions<K>) => Promise<Result<K>>;

export type Client = { [K in OperationId]: Call<K> } & {
  /** The underlying openapi-fetch client, typed by path (`http.GET('/v1/posts/{id}', ...)`). */
  http: ReturnType<typeof createFetchClient<paths>>;
};

export interface ClientOptions {
  /** Where the API answers, without /v1 (`https://api.example.com`). */
  baseUrl: string;
  /** A partner or workspace key (`svc_live_…`); sent as `Authorization: Bearer`, never in a URL. */
  apiKey: string;
  /** Another fetch (a test's, a proxy's). */
  fetch?: typeof fetch;
}

type RawRequest = (
  method: string,
  path: string,
  init?: object,
) => Promise<{ data?: unknown; error?: unknown; response: Response }>;

/**
 * A client with one method per operation of the OpenAPI document, named by its operationId
 * (`createPost`, `listConversations`...), each resolving to the success body or throwing ApiError.
 */
export function createClient(options: ClientOptions): Client {
  const http = createFetchClient<paths>({
    baseUrl: options.baseUrl.replace(/\/+$/, ''),
    headers: { Authorization: `Bearer ${options.apiKey}` },
    bodySerializer: serializeBody,
    ...(options.fetch ? { fetch: options.fetch } : {}),
  });
  const request = http.request as unknown as RawRequest;
  const client: Record<string, unknown> = { http };
  for (const [id, { method, path }] of Object.entries(OPERATIONS)) {
    client[id] = async (init?: object) => {
      const { data, error, response } = await request(method, path, init);
      if (!response.ok) throw new ApiError(response, error);
      return data;
    };
  }
  return client as Client;
}

/** JSON, except a body holding a file (a Blob): multipart/form-data, as an upload needs. */
function serializeBody(body: unknown): string | FormData {
  if (typeof body !== 'object' || body === null || !Object.values(body).some((v) => v instanceof Blob)) {
    return JSON.stringify(body);
  }
  const form = new FormData();
  for (const [name, value] of Object.entries(body)) {
    form.append(name, value instanceof Blob ? value : String(value));
  }
  return form;
}
