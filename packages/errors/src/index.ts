import { isUnavailable } from './unavailable.ts';

export { isUnavailable } from './unavailable.ts';

/**
 * The one error vocabulary of the product (spec section 7). Services throw ServiceError with one of
 * these codes; it crosses gRPC as a status plus metadata and leaves the gateway as
 * `{ error: { code, message, field?, details? } }` with the HTTP status from the table below.
 */
export const ERROR_CODES = [
  'unauthorized',
  'forbidden',
  'not_found',
  'validation_error',
  'unsupported',
  'conflict',
  'account_disconnected',
  'rate_limited',
  'network_error',
  // Not in the spec's table: faults on our side. The gateway never lets a raw stack trace out.
  'service_unavailable',
  'internal_error',
] as const;

export type ErrorCode = (typeof ERROR_CODES)[number];

export const HTTP_STATUS: Record<ErrorCode, number> = {
  unauthorized: 401,
  forbidden: 403,
  not_found: 404,
  validation_error: 400,
  unsupported: 400,
  conflict: 409,
  account_disconnected: 409,
  rate_limited: 429,
  network_error: 502,
  service_unavailable: 503,
  internal_error: 500,
};

/** gRPC status numbers (stable across implementations), so the mapping needs no gRPC import. */
export const GRPC_STATUS: Record<ErrorCode, number> = {
  unauthorized: 16, // UNAUTHENTICATED
  forbidden: 7, // PERMISSION_DENIED
  not_found: 5, // NOT_FOUND
  validation_error: 3, // INVALID_ARGUMENT
  unsupported: 12, // UNIMPLEMENTED
  conflict: 9, // FAILED_PRECONDITION
  account_disconnected: 9, // FAILED_PRECONDITION
  rate_limited: 8, // RESOURCE_EXHAUSTED
  network_error: 14, // UNAVAILABLE
  service_unavailable: 14, // UNAVAILABLE
  internal_error: 13, // INTERNAL
};

export interface ErrorBody {
  code: ErrorCode;
  message: string;
  field?: string;
  details?: Record<string, unknown>;
}

/** The envelope's body plus what travels beside it between services (never to a client). */
export interface WireError extends ErrorBody {
  retry_after_seconds?: number;
}

export class ServiceError extends Error {
  override name = 'ServiceError';
  readonly code: ErrorCode;
  readonly field: string | undefined;
  readonly details: Record<string, unknown> | undefined;
  /** When a refusal is temporary (`rate_limited`): the seconds the gateway puts in Retry-After. */
  readonly retryAfterSeconds: number | undefined;

  constructor(
    code: ErrorCode,
    message: string,
    options: {
      field?: string;
      details?: Record<string, unknown>;
      retryAfterSeconds?: number;
      cause?: unknown;
    } = {},
  ) {
    super(message, { cause: options.cause });
    this.code = code;
    this.field = options.field;
    this.details = options.details;
    this.retryAfterSeconds = options.retryAfterSeconds;
  }

  get httpStatus(): number {
    return HTTP_STATUS[this.code];
  }

  /** The body the spec puts under `error`: `field` only for validation, `details` only for network errors. */
  toBody(): ErrorBody {
    const body: ErrorBody = { code: this.code, message: this.message };
    if (this.field !== undefined && this.code === 'validation_error') body.field = this.field;
    if (this.details !== undefined && this.code === 'network_error') body.details = this.details;
    return body;
  }

  /** The error as it crosses between services: the body and the retry time, which is not in it. */
  toWire(): WireError {
    const wire: WireError = this.toBody();
    if (this.retryAfterSeconds !== undefined) wire.retry_after_seconds = this.retryAfterSeconds;
    return wire;
  }

  static fromBody(body: WireError, cause?: unknown): ServiceError {
    const code = isErrorCode(body.code) ? body.code : 'internal_error';
    return new ServiceError(code, body.message, {
      field: body.field,
      details: body.details,
      retryAfterSeconds: typeof body.retry_after_seconds === 'number' ? body.retry_after_seconds : undefined,
      cause,
    });
  }
}

/**
 * Any error in the vocabulary: ours as it is, a database out of reach (see `isUnavailable`) as
 * `service_unavailable`, anything else as a bare `internal_error` (the cause kept for the log).
 */
export function asServiceError(error: unknown): ServiceError {
  if (error instanceof ServiceError) return error;
  if (isUnavailable(error))
    return new ServiceError('service_unavailable', 'the database is not available right now; retry', {
      cause: error,
    });
  return new ServiceError('internal_error', 'internal error', { cause: error });
}

export function isErrorCode(value: unknown): value is ErrorCode {
  return typeof value === 'string' && (ERROR_CODES as readonly string[]).includes(value);
}

/** A byte count as the refusals say it: "8 MiB (8388608 bytes)", "500 KiB (512000 bytes)". */
function describeBytes(bytes: number): string {
  const mib = bytes / (1024 * 1024);
  const human = mib >= 1 ? `${Number(mib.toFixed(2))} MiB` : `${Number((bytes / 1024).toFixed(2))} KiB`;
  return `${human} (${bytes} bytes)`;
}

/** Shorthands for the errors raised most often, so call sites read as the rule they enforce. */
export const errors = {
  validation: (field: string, message: string) => new ServiceError('validation_error', message, { field }),
  notFound: (what: string) => new ServiceError('not_found', `${what} not found`),
  forbidden: (message: string) => new ServiceError('forbidden', message),
  conflict: (message: string) => new ServiceError('conflict', message),
  unauthorized: (message = 'missing, malformed, unknown or revoked API key') =>
    new ServiceError('unauthorized', message),
  /** A media file over the size limit, uploaded (`file`) or fetched by URL (`url`): one wording for both. */
  fileTooLarge: (field: 'file' | 'url', maxBytes: number) =>
    new ServiceError(
      'validation_error',
      `the ${field === 'file' ? 'file' : 'file at url'} is larger than the limit of ${describeBytes(maxBytes)}`,
      { field },
    ),
};
