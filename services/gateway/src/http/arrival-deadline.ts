import type { FastifyInstance } from 'fastify';
import { refuseLateRequest } from './early-errors.ts';

/**
 * How long a request may take to arrive, whole. Node's `requestTimeout` is one figure for the whole
 * server; a video sent as one form, or a large resumable part, can rightly take minutes where any
 * other body takes milliseconds. The server is given the uploads' allowance and this hook holds
 * every other request with a body to the short one, so a slow sender still holds a connection for
 * at most `requestMs` anywhere but on an upload (which also holds one of the partner's few upload
 * slots).
 *
 * Uploads are known by their media type: only the upload routes parse `multipart/form-data` and
 * `application/offset+octet-stream`; any other route refuses those types before reading a byte.
 */
export function holdArrivalDeadlines(app: FastifyInstance, limits: { requestMs: number; uploadMs: number }) {
  if (limits.uploadMs <= limits.requestMs) return;
  app.addHook('onRequest', (request, reply, done) => {
    const raw = request.raw;
    if (raw.complete || !hasBody(raw.headers) || isUpload(raw.headers['content-type'])) return done();
    const timer = setTimeout(() => {
      if (raw.complete) return;
      if (reply.raw.headersSent) raw.socket.destroy();
      else refuseLateRequest(raw.socket);
    }, limits.requestMs);
    const stop = () => clearTimeout(timer);
    raw.once('end', stop);
    raw.once('close', stop);
    done();
  });
}

function hasBody(headers: Record<string, string | string[] | undefined>): boolean {
  return headers['transfer-encoding'] !== undefined || Number(headers['content-length'] ?? 0) > 0;
}

const UPLOAD_TYPES = ['multipart/form-data', 'application/offset+octet-stream'];

function isUpload(contentType: string | undefined): boolean {
  const type = contentType?.slice(0, 64).toLowerCase().trimStart() ?? '';
  return UPLOAD_TYPES.some((upload) => type.startsWith(upload));
}
