import { describe, expect, it } from 'vitest';
import { asServiceError, ERROR_CODES, errors, GRPC_STATUS, HTTP_STATUS, ServiceError } from './index.ts';

describe('error vocabulary', () => {
  // Guarantee: every code has one HTTP status and one gRPC status (no code can fall through).
  it('maps every code in both tables', () => {
    for (const code of ERROR_CODES) {
      expect(HTTP_STATUS[code]).toBeGreaterThanOrEqual(400);
      expect(GRPC_STATUS[code]).toBeGreaterThan(0);
    }
  });

  // Guarantee: the spec's envelope carries `field` only for validation and `details` only for network errors.
  it('keeps field and details to the codes the spec allows them on', () => {
    expect(new ServiceError('validation_error', 'bad', { field: 'name' }).toBody()).toEqual({
      code: 'validation_error',
      message: 'bad',
      field: 'name',
    });
    expect(new ServiceError('conflict', 'no', { field: 'name', details: { a: 1 } }).toBody()).toEqual({
      code: 'conflict',
      message: 'no',
    });
    expect(
      new ServiceError('network_error', 'meta said no', { details: { code: 190 } }).toBody().details,
    ).toEqual({
      code: 190,
    });
  });

  it('round-trips through its body and refuses unknown codes', () => {
    const error = ServiceError.fromBody({ code: 'not_found', message: 'workspace not found' });
    expect(error.httpStatus).toBe(404);
    expect(ServiceError.fromBody({ code: 'teapot' as never, message: 'x' }).code).toBe('internal_error');
  });

  // Guarantee: an oversized file is refused in the same words whether uploaded or fetched by URL.
  it('says a media limit in MiB or KiB and in bytes', () => {
    expect(errors.fileTooLarge('file', 8 * 1024 * 1024).toBody()).toEqual({
      code: 'validation_error',
      message: 'the file is larger than the limit of 8 MiB (8388608 bytes)',
      field: 'file',
    });
    expect(errors.fileTooLarge('url', 2000).message).toBe(
      'the file at url is larger than the limit of 1.95 KiB (2000 bytes)',
    );
  });
});

describe('asServiceError', () => {
  const pgError = (code: string) =>
    Object.assign(new Error('terminating connection'), { code, severity: 'FATAL' });
  const refused = Object.assign(
    new AggregateError([Object.assign(new Error('connect'), { code: 'ECONNREFUSED' })]),
    {
      code: 'ECONNREFUSED',
    },
  );

  // Guarantee: an error saying the database cannot be reached right now, in every wrapping it
  // reaches a handler in (pg, a refused connect, Prisma's driver adapter, pg's wording), becomes
  // service_unavailable (503, retryable); other unexpected errors stay internal_error (500).
  it('calls a database out of reach unavailable, and nothing else', () => {
    const unavailable = [
      pgError('57P01'),
      pgError('57P03'),
      pgError('08006'),
      refused,
      new Error('Connection terminated unexpectedly'),
      new Error('timeout exceeded when trying to connect'),
      new Error('wrapped', { cause: pgError('57P02') }),
      {
        message: 'Invalid `db.post.findMany()` invocation',
        meta: { driverAdapterError: { cause: { kind: 'DatabaseNotReachable' } } },
      },
      { message: 'x', meta: { driverAdapterError: { cause: { kind: 'postgres', code: '57P01' } } } },
      { code: 'P1017', message: 'Server has closed the connection.' },
    ];
    for (const error of unavailable)
      expect(asServiceError(error).code, String(error)).toBe('service_unavailable');
    for (const error of [pgError('23505'), pgError('42P01'), new TypeError('x is undefined'), 'text'])
      expect(asServiceError(error).code, String(error)).toBe('internal_error');
    const ours = errors.notFound('post');
    expect(asServiceError(ours)).toBe(ours);
  });
});
