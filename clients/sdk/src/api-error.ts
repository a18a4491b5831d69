import type { components } from './generated/api.ts';

/** The codes of spec section 7 (and our own 503/500), as the OpenAPI document lists them. */
export type ErrorCode = components['schemas']['Error']['error']['code'];

type Envelope = components['schemas']['Error'];

/**
 * Every refusal of the API, as one error: the envelope's `code`, `message`, `field` (a
 * validation_error's field) and `details` (a network_error's provider error), with the HTTP
 * status, `retryAfter` (seconds, from Retry-After on a 429) and the request id to quote to support.
 * An answer that is not the envelope (a proxy's page, say) has the code `unexpected_response`.
 */
export class ApiError extends Error {
  override name = 'ApiError';
  readonly code: ErrorCode | 'unexpected_response';
  readonly field: string | undefined;
  readonly details: Record<string, unknown> | undefined;
  readonly status: number;
  readonly retryAfter: number | undefined;
  readonly requestId: string | undefined;

  constructor(response: Response, body: unknown) {
    const envelope = isEnvelope(body) ? body.error : undefined;
    super(envelope?.message ?? `HTTP ${response.status} without the error envelope`);
    this.code = envelope?.code ?? 'unexpected_response';
    this.field = envelope?.field;
    this.details = envelope?.details;
    this.status = response.status;
    this.requestId = response.headers.get('x-request-id') ?? undefined;
    const retryAfter = Number.parseInt(response.headers.get('retry-after') ?? '', 10);
    this.retryAfter = Number.isNaN(retryAfter) ? undefined : retryAfter;
  }
}

function isEnvelope(body: unknown): body is Envelope {
  const error = (body as { error?: unknown } | null)?.error as Record<string, unknown> | undefined;
  return typeof error?.code === 'string' && typeof error.message === 'string';
}
