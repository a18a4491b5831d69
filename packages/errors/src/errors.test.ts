import { describe, expect, it } from 'vitest';
import { ERROR_CODES, errors, GRPC_STATUS, HTTP_STATUS, ServiceError } from './index.ts';

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
