import { ServiceError } from '@svc/errors';
import type { FastifyError, FastifyInstance } from 'fastify';
import { AllowedMethods } from './allowed-methods.ts';
import { drainUnreadBody } from './unread-body.ts';

/**
 * The one place an error becomes an HTTP answer, in the spec's envelope. Three branches:
 * ours (ServiceError), the framework's (bad JSON, wrong content type, oversized body...), and
 * anything else (logged with its stack, answered as a bare internal_error: never a stack trace).
 */
export function installErrorHandling(app: FastifyInstance): void {
  app.setErrorHandler(async (error: FastifyError | ServiceError | Error, request, reply) => {
    const serviceError = toServiceError(error);
    if (serviceError.code === 'internal_error' || serviceError.code === 'service_unavailable') {
      request.log.error({ err: error }, 'request failed');
    }
    await drainUnreadBody(request, reply);
    if (serviceError.retryAfterSeconds !== undefined)
      reply.header('Retry-After', String(Math.max(1, Math.ceil(serviceError.retryAfterSeconds))));
    return reply.code(serviceError.httpStatus).send({ error: serviceError.toBody() });
  });
  const allowed = new AllowedMethods();
  app.addHook('onRoute', (route) => allowed.add(route.method, route.url));
  app.setNotFoundHandler((request, reply) => {
    const path = request.url.split('?')[0] ?? '';
    const methods = allowed.at(path);
    // A path we serve, with a method it does not take (OPTIONS, HEAD on a POST, a DELETE too
    // many): HTTP's 405, which the spec's table does not have, so a 400 naming the method.
    if (methods.length > 0) {
      reply.header('Allow', methods.join(', '));
      return reply.code(400).send({
        error: new ServiceError(
          'validation_error',
          `${request.method} is not supported on ${path}; use ${methods.join(' or ')}`,
          { field: 'method' },
        ).toBody(),
      });
    }
    return reply.code(404).send({
      error: new ServiceError('not_found', `no route ${request.method} ${path}`).toBody(),
    });
  });
}

const FRAMEWORK_ERRORS: Record<string, [field: string, message: string]> = {
  FST_ERR_CTP_INVALID_JSON_BODY: ['body', 'the body is not valid JSON'],
  FST_ERR_CTP_EMPTY_JSON_BODY: ['body', 'the body is empty but Content-Type is application/json'],
  FST_ERR_CTP_INVALID_MEDIA_TYPE: ['Content-Type', 'unsupported Content-Type: send application/json'],
  FST_ERR_CTP_INVALID_CONTENT_LENGTH: ['Content-Length', 'Content-Length does not match the body'],
  FST_ERR_CTP_BODY_TOO_LARGE: ['body', 'the body is too large'],
  FST_ERR_CTP_INVALID_TYPE: ['Content-Type', 'invalid Content-Type header'],
};

export function toServiceError(error: FastifyError | ServiceError | Error): ServiceError {
  if (error instanceof ServiceError) return error;
  const fastifyError = error as FastifyError;
  const known = fastifyError.code ? FRAMEWORK_ERRORS[fastifyError.code] : undefined;
  if (known) return new ServiceError('validation_error', known[1], { field: known[0] });
  if (error instanceof SyntaxError || fastifyError.statusCode === 400) {
    return new ServiceError('validation_error', 'the request is malformed', { field: 'body' });
  }
  return new ServiceError('internal_error', 'internal error', { cause: error });
}
