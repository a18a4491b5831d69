import multipart from '@fastify/multipart';
import { createLogger, type Logger } from '@svc/logging';
import Fastify, {
  type FastifyBaseLogger,
  type FastifyError,
  type FastifyInstance,
  type FastifyReply,
  type FastifyRequest,
  LogController,
} from 'fastify';
import type { SandboxConfig } from './config.ts';
import { registerControl } from './control.ts';
import { ControlError } from './control-errors.ts';
import { registerDeliveryControl } from './delivery-control.ts';
import { applyFaults } from './faults.ts';
import { GraphFailure } from './graph-errors.ts';
import { registerHostedFiles } from './hosted-files.ts';
import { registerGraphNodes } from './nodes.ts';
import { registerOauth } from './oauth.ts';
import { parseForm } from './params.ts';
import { registerPublicPages } from './public-pages.ts';
import { addUsageHeaders, runConfigRefusal } from './run-conditions.ts';
import { registerUploads } from './uploads.ts';
import { MAX_UPLOAD_BYTES } from './video-check.ts';
import { World } from './world.ts';

const GRAPH_VERSION = 'v25.0';

/** Meta accepts any `/vNN.N` prefix or none and answers the same (facts intro); routes see no prefix. */
export function stripVersion(url: string): string {
  const stripped = url.replace(/^\/v\d+(?:\.\d+)?(?=[/?]|$)/, '');
  return stripped === '' || stripped.startsWith('?') ? `/${stripped}` : stripped;
}

/** Headers graph.facebook.com sends with every answer (facts §0.3). */
function graphHeaders(traceId: string) {
  return {
    'facebook-api-version': GRAPH_VERSION,
    'x-fb-trace-id': traceId,
    'x-fb-request-id': traceId,
    'cache-control': 'private, no-cache, no-store, must-revalidate',
    pragma: 'no-cache',
    expires: 'Sat, 01 Jan 2000 00:00:00 GMT',
  };
}

const isGraphPath = (url: string) => !url.startsWith('/__sandbox') && !url.startsWith('/dialog/');

declare module 'fastify' {
  interface FastifyRequest {
    traceId: string;
  }
}

function graphErrorReply(reply: FastifyReply, failure: GraphFailure, traceId: string) {
  if (failure.body.code === 190) {
    reply.header(
      'www-authenticate',
      `OAuth "Facebook Platform" "invalid_token" "${failure.body.message.replaceAll('"', "'")}"`,
    );
  }
  return reply.code(failure.status).send({ error: { ...failure.body, fbtrace_id: traceId } });
}

function errorHandler(log: Logger) {
  return (error: FastifyError | Error, req: FastifyRequest, reply: FastifyReply) => {
    if (error instanceof ControlError)
      return reply.code(error.status).send({ error: { message: error.message } });
    if (error instanceof GraphFailure) return graphErrorReply(reply, error, req.traceId);
    const status = 'statusCode' in error && typeof error.statusCode === 'number' ? error.statusCode : 500;
    if (!isGraphPath(req.url)) return reply.code(status).send({ error: { message: error.message } });
    if (status < 500)
      return graphErrorReply(
        reply,
        new GraphFailure({ message: `(#100) ${error.message}`, type: 'OAuthException', code: 100 }),
        req.traceId,
      );
    log.error({ err: error }, 'sandbox bug');
    const failure = new GraphFailure(
      { message: 'An unknown error occurred', type: 'OAuthException', code: 1, is_transient: true },
      500,
    );
    return graphErrorReply(reply, failure, req.traceId);
  };
}

/** Builds the sandbox without listening, so tests can start it in-process on port 0. */
export function buildSandbox(config: SandboxConfig, logger?: Logger): { app: FastifyInstance; world: World } {
  const log = logger ?? createLogger('graph-sandbox', { level: config.logLevel });
  const world = new World(config, log);
  const loggerInstance: FastifyBaseLogger = log;
  const app = Fastify({
    loggerInstance,
    // Closing the sandbox drops its clients' keep-alive connections instead of waiting for them.
    forceCloseConnections: true,
    rewriteUrl: (req) => stripVersion(req.url ?? '/'),
    routerOptions: { ignoreTrailingSlash: true },
    // One line per request only when debugging; the sandbox is otherwise quiet.
    logController: new LogController({
      disableRequestLogging: config.logLevel !== 'debug' && config.logLevel !== 'trace',
    }),
  });
  app.addContentTypeParser('application/x-www-form-urlencoded', { parseAs: 'string' }, (_req, body, done) => {
    done(null, parseForm(String(body)));
  });
  // Graph takes multipart bodies too (facts §0.2): fields become parameters, a file part (`source`,
  // `video_file_chunk`) a Buffer.
  app.register(multipart, {
    attachFieldsToBody: 'keyValues',
    limits: { fileSize: MAX_UPLOAD_BYTES, files: 1 },
  });
  app.decorateRequest('traceId', '');
  app.decorateRequest('processingFault', null);
  // The hooks run on every call, so they are callback-style: an async hook costs a promise and a
  // microtask hop per request even when it has nothing to do.
  app.addHook('onRequest', (req, _reply, done) => {
    req.traceId = world.ids.traceId();
    done();
  });
  // Faults run after body parsing so a faulted POST still consumes its body cleanly. An outage or
  // a throttle (POST /__sandbox/config) comes first: the call never reaches a fault.
  app.addHook('preHandler', (req, reply, done) => {
    const { faults, runConfig } = world.store;
    const idle = faults.length === 0 && !runConfig.outage && !runConfig.throttle;
    if (idle || !isGraphPath(req.url)) return done();
    const refusal = runConfigRefusal(runConfig, req.url);
    if (refusal) {
      reply.headers(refusal.headers);
      return done(refusal.failure);
    }
    if (faults.length === 0) return done();
    applyFaults(world, req, reply, req.traceId).then(() => done(), done);
  });
  app.addHook('onSend', (req, reply, payload, done) => {
    if (isGraphPath(req.url)) {
      reply.headers(graphHeaders(req.traceId));
      addUsageHeaders(reply, world.store.runConfig, req.url);
    }
    done(null, payload);
  });
  app.setErrorHandler(errorHandler(log));
  app.addHook('onClose', async () => world.webhooks.close());
  registerOauth(app, world);
  registerControl(app, world);
  registerDeliveryControl(app, world);
  registerHostedFiles(app, world);
  registerPublicPages(app, world);
  registerUploads(app, world);
  registerGraphNodes(app, world);
  return { app, world };
}

export interface RunningSandbox {
  url: string;
  app: FastifyInstance;
  world: World;
  close(): Promise<void>;
}

/** Starts listening; with port 0 the real port also becomes the default public URL. */
export async function startSandbox(config: SandboxConfig, logger?: Logger): Promise<RunningSandbox> {
  const { app, world } = buildSandbox(config, logger);
  await app.listen({ port: config.port, host: config.host });
  const address = app.server.address();
  const port = typeof address === 'object' && address ? address.port : config.port;
  const host = config.host === '0.0.0.0' || config.host === '::' ? '127.0.0.1' : config.host;
  const url = `http://${host}:${port}`;
  if (!config.publicUrlExplicit) config.publicUrl = url;
  return { url, app, world, close: () => app.close() };
}
