import type { IncomingHttpHeaders } from 'node:http';
import { errors, ServiceError } from '@svc/errors';

/** The tus protocol version spoken, and its extensions (https://tus.io/protocols/resumable-upload). */
export const TUS_VERSION = '1.0.0';
export const TUS_EXTENSIONS = 'creation,termination,expiration';
/** The only body a PATCH takes: raw bytes at the upload's offset. */
export const OFFSET_OCTET_STREAM = 'application/offset+octet-stream';

/**
 * A refusal whose status tus prescribes (412 for another protocol version, 413 for a file over
 * the limit, 415 for a PATCH of another type), in the spec's envelope like every other.
 */
export class TusRefusal extends ServiceError {
  constructor(
    private readonly status: number,
    field: string,
    message: string,
  ) {
    super('validation_error', message, { field });
  }

  override get httpStatus(): number {
    return this.status;
  }
}

/** Every tus request but OPTIONS says the version it speaks; another one is a 412. */
export function checkTusResumable(headers: IncomingHttpHeaders): void {
  if (headers['tus-resumable'] !== TUS_VERSION)
    throw new TusRefusal(
      412,
      'Tus-Resumable',
      `this server speaks tus ${TUS_VERSION}: send the header Tus-Resumable: ${TUS_VERSION}`,
    );
}

/** A PATCH's body is raw bytes (415 otherwise), checked before anything reads it. */
export function checkPatchType(headers: IncomingHttpHeaders): void {
  const type = headers['content-type']?.split(';')[0]?.trim().toLowerCase();
  if (type !== OFFSET_OCTET_STREAM)
    throw new TusRefusal(
      415,
      'Content-Type',
      `a PATCH sends its bytes as Content-Type: ${OFFSET_OCTET_STREAM}`,
    );
}

/** A header holding a byte count or offset: digits only, a safe integer. */
export function byteCount(headers: IncomingHttpHeaders, name: string): number {
  const value = headers[name.toLowerCase()];
  if (typeof value !== 'string' || value === '')
    throw errors.validation(name, `the header ${name} is required`);
  const count = /^\d{1,15}$/.test(value) ? Number(value) : Number.NaN;
  if (!Number.isSafeInteger(count)) throw errors.validation(name, `${name} must be a number of bytes`);
  return count;
}

const METADATA_KEY = /^[A-Za-z0-9_.-]{1,64}$/;
const BASE64 = /^[A-Za-z0-9+/]*={0,2}$/;

/**
 * Upload-Metadata: comma-separated pairs of a key and its value in base64 (a key may stand alone).
 * A malformed pair is a 400 on the header rather than a guess.
 */
export function parseMetadata(header: string | undefined): Record<string, string> {
  const metadata: Record<string, string> = {};
  if (!header?.trim()) return metadata;
  for (const pair of header.split(',')) {
    const [key = '', value = '', extra] = pair.trim().split(' ');
    if (!METADATA_KEY.test(key) || extra !== undefined || !BASE64.test(value) || value.length % 4 !== 0)
      throw errors.validation(
        'Upload-Metadata',
        'Upload-Metadata holds comma-separated pairs of a key and its base64 value',
      );
    metadata[key] = Buffer.from(value, 'base64').toString('utf8');
  }
  return metadata;
}

/** An ISO timestamp as HTTP writes dates (Upload-Expires). */
export function httpDate(iso: string): string {
  return new Date(iso).toUTCString();
}
