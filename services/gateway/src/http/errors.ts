import { ServiceError } from '@svc/errors';
import type { FastifyError, FastifyInstance, FastifyReply, FastifyRequest } from 'fastify';

/**
 * The one place an error becomes an HTTP answer, in the spec's envelope. Three branches:
 * ours (ServiceError), the framework's (bad JSON, wrong content type, oversized body...), and
 * anything else (logged with its stack, answered as a bare internal_error: never a stack trace).
 */
export function installErrorHandling(app: FastifyInstance): void {
  app.setErrorHandler((error: FastifyError | ServiceError | Error, request, reply) => {
    const serviceError = toServiceError(error);
    if (serviceError.code === 'internal_error' || serviceError.code === 'service_unavailable') {
      request.log.error({ err: error }, 'request failed');
    }
    return reply.code(serviceError.httpStatus).send({ error: serviceError.toBody() });
  });
  app.setNotFoundHandler((request, reply) =>
    reply.code(404).send({
      error: new ServiceError(
        'not_found',
        `no route ${request.method} ${request.url.split('?')[0]}`,
      ).toBody(),
    }),
  );
}

/**
 * The router's refusals, made before any route or hook runs (Fastify's `frameworkErrors`):
 * a path segment over the router's length limit names no object (ids are opaque, spec 2: 404
 * like any id that does not exist), and a path that cannot be percent-decoded is malformed.
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

/** Options of the Fastify constructor: answers given before a request reaches a route. */
export const earlyErrorOptions = { frameworkErrors: routerError };

const FRAMEWORK_ERRORS: Record<string, [field: string, message: string]> = {
  FST_ERR_CTP_INVALID_JSON_BODY: ['body', 'the body is not valid JSON'],
  FST_ERR_CTP_EMPTY_JSON_BODY: ['body', 'the body is empty but Content-Type is application/json'],
  FST_ERR_CTP_INVALID_MEDIA_TYPE: ['Content-Type', 'unsupported Content-Type: send application/json'],
  FST_ERR_CTP_INVALID_CONTENT_LENGTH: ['Content-Length', 'Content-Length does not match the body'],
  FST_ERR_CTP_BODY_TOO_LARGE: ['body', 'the body is too large'],
  FST_ERR_CTP_INVALID_TYPE: ['Content-Type', 'invalid Content-Type header'],
};

function toServiceError(error: FastifyError | ServiceError | Error): ServiceError {
  if (error instanceof ServiceError) return error;
  const fastifyError = error as FastifyError;
  const known = fastifyError.code ? FRAMEWORK_ERRORS[fastifyError.code] : undefined;
  if (known) return new ServiceError('validation_error', known[1], { field: known[0] });
  if (error instanceof SyntaxError || fastifyError.statusCode === 400) {
    return new ServiceError('validation_error', 'the request is malformed', { field: 'body' });
  }
  return new ServiceError('internal_error', 'internal error', { cause: error });
}
