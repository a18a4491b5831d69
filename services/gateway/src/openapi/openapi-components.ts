import { ERROR_CODES } from '@svc/errors';
import { z } from 'zod';
import { idempotencyKeyHeader } from '../http/idempotency.ts';
import type { SchemaComponents } from './openapi-schemas.ts';

/** The error envelope of spec section 7, which every refusal carries. */
const errorEnvelope = z
  .object({
    error: z.object({
      code: z.enum(ERROR_CODES),
      message: z.string(),
      field: z.string().optional().describe('present for validation_error: the field at fault'),
      details: z
        .record(z.string(), z.unknown())
        .optional()
        .describe("present for network_error: the network provider's error"),
    }),
  })
  .meta({ id: 'Error' });

const integerHeader = (description: string) => ({ description, schema: { type: 'integer', minimum: 0 } });

const HEADERS = {
  'X-Request-Id': {
    description: 'The id of this request (the one sent in X-Request-Id, or a new one): quote it to support.',
    schema: { type: 'string' },
  },
  'X-RateLimit-Limit': integerHeader('Requests allowed per minute to this key (sliding one-minute window).'),
  'X-RateLimit-Remaining': integerHeader('Requests left in the current window.'),
  'X-RateLimit-Reset': integerHeader('Seconds until a request is allowed again, at least 1.'),
  'Idempotent-Replayed': {
    description: 'true when this is the recorded answer to an earlier request with the same Idempotency-Key',
    schema: { type: 'string', enum: ['true'] },
  },
  'Retry-After': {
    ...integerHeader('Seconds to wait before retrying; retrying earlier counts against the window.'),
    required: true,
  },
};

/** Each refusal of the error vocabulary as a reusable response, by HTTP status. */
const REFUSALS: Record<string, { description: string; retryAfter?: boolean }> = {
  BadRequest: { description: 'validation_error (with `field`) or unsupported' },
  Unauthorized: { description: 'unauthorized: the key is missing, malformed, revoked or expired' },
  Forbidden: { description: 'forbidden: the key cannot reach this workspace or endpoint' },
  NotFound: { description: "not_found: no such object in the caller's scope" },
  Conflict: {
    description:
      "conflict (the object's state forbids it, or the Idempotency-Key was used with another request) or account_disconnected",
  },
  RateLimited: { description: 'rate_limited: over the per-key limit', retryAfter: true },
  NetworkError: {
    description: 'network_error: the network provider refused or failed; its error in `details`',
  },
  ServiceUnavailable: {
    description: 'service_unavailable: a part of the service is out of reach; retry later',
  },
  InternalError: { description: 'internal_error: a fault on our side (never a stack trace)' },
};

function refusal({ description, retryAfter }: { description: string; retryAfter?: boolean }) {
  const header = (name: string) => ({ $ref: `#/components/headers/${name}` });
  return {
    description,
    headers: {
      'X-Request-Id': header('X-Request-Id'),
      'X-RateLimit-Limit': header('X-RateLimit-Limit'),
      'X-RateLimit-Remaining': header('X-RateLimit-Remaining'),
      'X-RateLimit-Reset': header('X-RateLimit-Reset'),
      ...(retryAfter ? { 'Retry-After': header('Retry-After') } : {}),
    },
    content: { 'application/json': { schema: { $ref: '#/components/schemas/Error' } } },
  };
}

/** What every operation shares: headers, refusals, header parameters and the bearer scheme. */
export function sharedComponents(schemas: SchemaComponents) {
  schemas.convert(errorEnvelope, 'output');
  return {
    securitySchemes: {
      bearer: {
        type: 'http',
        scheme: 'bearer',
        description:
          'A partner key or a workspace key (`svc_live_…`), or an embed session (`sve_…`) for /v1/embed/*. Never in a URL.',
      },
    },
    headers: HEADERS,
    responses: Object.fromEntries(Object.entries(REFUSALS).map(([name, spec]) => [name, refusal(spec)])),
    parameters: {
      IdempotencyKey: {
        name: 'Idempotency-Key',
        in: 'header',
        required: false,
        description: idempotencyKeyHeader.description,
        schema: schemas.convert(idempotencyKeyHeader, 'input'),
      },
      RequestId: {
        name: 'X-Request-Id',
        in: 'header',
        required: false,
        description: 'Your id for this request (1-128 of A-Z a-z 0-9 . _ : -): logged, and answered back.',
        schema: { type: 'string', pattern: '^[A-Za-z0-9._:-]{1,128}$' },
      },
    },
  };
}
