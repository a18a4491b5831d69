import { STATUS_CODES } from 'node:http';
import type { Socket } from 'node:net';
import { ServiceError } from '@svc/errors';
import type { FastifyError, FastifyReply, FastifyRequest } from 'fastify';
import { toServiceError } from './errors.ts';

/**
 * Refusals made before a request reaches a route, which Fastify would otherwise answer in its own
 * shape (`{"error":"Bad Request","code":"FST_ERR_…"}`, 414, 431, 408): the router's, and Node's
 * HTTP parser's. Both answer in the spec's envelope with a status from its table.
 */
export const earlyErrorOptions = { frameworkErrors: routerError, clientErrorHandler: clientError };

/**
 * The router's (Fastify's `frameworkErrors`): a path segment over the router's length limit names
 * no object (ids are opaque, spec 2: 404 like any id that does not exist), and a path that cannot
 * be percent-decoded is malformed.
 */
function routerError(error: FastifyError, request: FastifyRequest, reply: FastifyReply): void {
  const answer =
    error.code === 'FST_ERR_MAX_PARAM_LENGTH'
      ? new ServiceError('not_found', 'not found: a path segment is longer than any id')
      : error.code === 'FST_ERR_BAD_URL'
        ? new ServiceError('validation_error', 'the path is not valid percent-encoded UTF-8', {
            field: 'url',
          })
        : toServiceError(error);
  reply.header('X-Request-Id', request.id).code(answer.httpStatus).send({ error: answer.toBody() });
}

/** Node's parser errors, by the part of the request at fault. */
const PARSER_ERRORS: Record<string, [field: string, message: string]> = {
  HPE_INVALID_METHOD: ['method', 'unknown HTTP method'],
  HPE_INVALID_URL: ['url', 'the URL is malformed'],
  HPE_INVALID_VERSION: ['request', 'the HTTP version is malformed'],
  HPE_INVALID_HEADER_TOKEN: ['headers', 'a header is malformed'],
  HPE_INVALID_CONTENT_LENGTH: ['Content-Length', 'Content-Length is malformed'],
  HPE_UNEXPECTED_CONTENT_LENGTH: ['Content-Length', 'Content-Length and Transfer-Encoding are both set'],
  HPE_INVALID_TRANSFER_ENCODING: ['Transfer-Encoding', 'Transfer-Encoding is malformed'],
  HPE_INVALID_CHUNK_SIZE: ['body', 'the chunked body is malformed'],
  HPE_CHUNK_EXTENSIONS_OVERFLOW: ['body', 'the chunk extensions are too large'],
  ERR_HTTP_REQUEST_TIMEOUT: ['request', 'the request did not arrive in time'],
};

/**
 * A request line longer than this, when the headers overflow, is called a URL that is too long
 * (Node counts the request line in its 16 KiB header limit and reports both as one error).
 */
const LONG_URL_CHARS = 8 * 1024;

function parserRefusal(error: NodeJS.ErrnoException & { rawPacket?: Buffer }): ServiceError {
  if (error.code === 'HPE_HEADER_OVERFLOW') {
    const packet = error.rawPacket?.toString('latin1') ?? '';
    const lineEnd = packet.indexOf('\r\n');
    const requestLine = lineEnd === -1 ? packet.length : lineEnd;
    return requestLine > LONG_URL_CHARS
      ? new ServiceError('validation_error', 'the URL is too long', { field: 'url' })
      : new ServiceError('validation_error', 'the headers are too large (16 KiB at most)', {
          field: 'headers',
        });
  }
  const [field, message] = PARSER_ERRORS[error.code ?? ''] ?? ['request', 'the HTTP request is malformed'];
  return new ServiceError('validation_error', message, { field });
}

/** A request whose body did not arrive within its deadline (`arrival-deadline.ts`): as Node's own. */
export function refuseLateRequest(socket: Socket): void {
  clientError(Object.assign(new Error('request timeout'), { code: 'ERR_HTTP_REQUEST_TIMEOUT' }), socket);
}

/**
 * Node's parser (Fastify's `clientErrorHandler`): no request exists yet, so the answer is written
 * on the socket, then the connection closes, as Node and Fastify do by default.
 */
function clientError(error: NodeJS.ErrnoException, socket: Socket): void {
  // A reset connection has nobody to answer.
  if (error.code === 'ECONNRESET' || socket.destroyed) return;
  const answer = parserRefusal(error);
  const body = JSON.stringify({ error: answer.toBody() });
  if (socket.writable) {
    socket.write(
      `HTTP/1.1 ${answer.httpStatus} ${STATUS_CODES[answer.httpStatus]}\r\n` +
        'Content-Type: application/json; charset=utf-8\r\n' +
        `Content-Length: ${Buffer.byteLength(body)}\r\nConnection: close\r\n\r\n${body}`,
    );
  }
  socket.destroy(error);
}
