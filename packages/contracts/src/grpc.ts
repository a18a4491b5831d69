import {
  create,
  type DescMessage,
  fromBinary,
  type MessageInitShape,
  type MessageShape,
  toBinary,
} from '@bufbuild/protobuf';
import type { GenService, GenServiceMethods } from '@bufbuild/protobuf/codegenv2';
import * as grpc from '@grpc/grpc-js';
import { asServiceError, type ErrorBody, GRPC_STATUS, ServiceError } from '@svc/errors';
import {
  currentRequestId,
  injectTraceContext,
  inSpan,
  type Logger,
  newRequestId,
  REQUEST_ID_HEADER,
  SpanKind,
  tracingEnabled,
  withRequestId,
} from '@svc/logging';
import { endServerSpan, metadataCarrier, rpcSpanStart } from './grpc-trace.ts';

/**
 * The glue between protobuf-es v2 descriptors and @grpc/grpc-js, used by every service.
 * - Paths are `/<package>.<Service>/<Method>`, messages travel as protobuf binary.
 * - A ServiceError crosses the wire as its gRPC status plus `svc-error-bin` metadata and comes back
 *   out of the client as the same ServiceError, so the gateway maps errors in one place.
 * - The caller's request id travels as `x-request-id` metadata; handlers run inside it. With
 *   tracing on, each call is a client span and a server span, linked by `traceparent` metadata.
 * - Every client call has a deadline.
 * The mapped types make a missing method or a misspelled field a compile error.
 */
type Methods<S> = S extends GenService<infer M> ? M : never;
type UnaryMethod = { methodKind: 'unary'; input: DescMessage; output: DescMessage };

/** What a handler may know about the call besides its request: the metadata (caller credential). */
export interface CallContext {
  metadata: grpc.Metadata;
}

export type ServiceImplementation<S extends GenService<GenServiceMethods>> = {
  [K in keyof Methods<S>]: Methods<S>[K] extends UnaryMethod
    ? (
        request: MessageShape<Methods<S>[K]['input']>,
        context: CallContext,
      ) => Promise<MessageInitShape<Methods<S>[K]['output']>>
    : never;
};

/** Metadata key of a calling service's credential (`createClient`'s `credential` option). */
export const CALLER_CREDENTIAL_METADATA = 'svc-caller-credential';

export type ServiceClient<S extends GenService<GenServiceMethods>> = {
  [K in keyof Methods<S>]: Methods<S>[K] extends UnaryMethod
    ? (
        request: MessageInitShape<Methods<S>[K]['input']>,
        options?: { deadlineMs?: number },
      ) => Promise<MessageShape<Methods<S>[K]['output']>>
    : never;
} & { close(): void };

const ERROR_METADATA = 'svc-error-bin';
const DEFAULT_DEADLINE_MS = 10_000;

function serialize(schema: DescMessage, value: unknown): Buffer {
  return Buffer.from(toBinary(schema, create(schema, value as MessageInitShape<DescMessage>)));
}

function definitionOf(service: GenService<GenServiceMethods>): grpc.ServiceDefinition {
  const definition: Record<string, grpc.MethodDefinition<unknown, unknown>> = {};
  for (const method of service.methods) {
    definition[method.localName] = {
      path: `/${service.typeName}/${method.name}`,
      requestStream: false,
      responseStream: false,
      requestSerialize: (value) => serialize(method.input, value),
      requestDeserialize: (bytes: Buffer) => fromBinary(method.input, bytes),
      responseSerialize: (value) => serialize(method.output, value),
      responseDeserialize: (bytes: Buffer) => fromBinary(method.output, bytes),
    };
  }
  return definition;
}

/** Told of every answered call (the service's metrics): `Package.Service/Method` and the status name. */
type GrpcCallObserver = (call: { method: string; code: string; seconds: number }) => void;

export function addService<S extends GenService<GenServiceMethods>>(
  server: grpc.Server,
  service: S,
  implementation: ServiceImplementation<S>,
  logger: Logger,
  observe: GrpcCallObserver = () => {},
): void {
  const handlers: grpc.UntypedServiceImplementation = {};
  for (const method of service.methods) {
    const impl = (
      implementation as Record<string, (request: unknown, context: CallContext) => Promise<unknown>>
    )[method.localName];
    if (!impl) throw new Error(`${service.typeName}.${method.name} has no implementation`);
    const path = `${service.typeName}/${method.name}`;
    const spanStart = rpcSpanStart(SpanKind.SERVER, service.typeName, method.name);
    handlers[method.localName] = (
      call: grpc.ServerUnaryCall<unknown, unknown>,
      callback: grpc.sendUnaryData<unknown>,
    ) => {
      const requestId = String(call.metadata.get(REQUEST_ID_HEADER)[0] ?? newRequestId());
      const started = performance.now();
      const answered = (code: grpc.status) =>
        observe({ method: path, code: grpc.status[code], seconds: (performance.now() - started) / 1000 });
      const start = tracingEnabled() ? { ...spanStart, carrier: metadataCarrier(call.metadata) } : spanStart;
      withRequestId(requestId, () =>
        inSpan(path, start, async (span) => {
          try {
            callback(null, await impl.call(implementation, call.request, { metadata: call.metadata }));
            answered(grpc.status.OK);
            endServerSpan(span, grpc.status.OK);
            logger.debug({ path, duration_ms: Math.round(performance.now() - started) }, 'gRPC call');
          } catch (error) {
            const grpcError = toGrpcError(error, path, logger);
            answered(grpcError.code ?? grpc.status.UNKNOWN);
            endServerSpan(span, grpcError.code ?? grpc.status.UNKNOWN, error);
            logger.debug(
              { path, code: grpcError.code, duration_ms: Math.round(performance.now() - started) },
              'gRPC call failed',
            );
            callback(grpcError);
          }
        }),
      );
    };
  }
  server.addService(definitionOf(service), handlers);
}

function toGrpcError(error: unknown, path: string, logger: Logger): Partial<grpc.StatusObject> {
  const serviceError = asServiceError(error);
  if (serviceError.code === 'internal_error')
    logger.error({ err: error, path }, 'unexpected error in gRPC handler');
  else if (serviceError !== error) logger.warn({ err: error, path }, 'gRPC call met an unavailable database');
  const metadata = new grpc.Metadata();
  metadata.set(ERROR_METADATA, Buffer.from(JSON.stringify(serviceError.toBody())));
  return { code: GRPC_STATUS[serviceError.code], details: serviceError.message, metadata };
}

function fromGrpcError(error: grpc.ServiceError, serviceName: string): ServiceError {
  const raw = error.metadata?.get(ERROR_METADATA)[0];
  if (raw) return ServiceError.fromBody(JSON.parse(String(raw)) as ErrorBody, error);
  if (error.code === grpc.status.UNAVAILABLE || error.code === grpc.status.DEADLINE_EXCEEDED) {
    return new ServiceError('service_unavailable', `the ${serviceName} service is not answering`, {
      cause: error,
    });
  }
  return new ServiceError('internal_error', 'internal error', { cause: error });
}

export function createClient<S extends GenService<GenServiceMethods>>(
  service: S,
  address: string,
  options: { defaultDeadlineMs?: number; credential?: string; maxMessageBytes?: number } = {},
): ServiceClient<S> {
  const Constructor = grpc.makeGenericClientConstructor(definitionOf(service), service.typeName);
  const client = new Constructor(address, grpc.credentials.createInsecure(), {
    'grpc.keepalive_time_ms': 30_000,
    // A `dns:///name:port` target resolving to several pods (a headless Service) gets calls spread
    // over all of them. A plain address (pnpm start, tests) keeps pick_first: a call to a peer
    // that restarted reconnects at once, where round_robin fails calls until its next retry.
    ...(address.startsWith('dns:')
      ? { 'grpc.service_config': JSON.stringify({ loadBalancingConfig: [{ round_robin: {} }] }) }
      : {}),
    // A pod that went away is tried again at most 2 s later, not after grpc's default 120 s.
    'grpc.initial_reconnect_backoff_ms': 250,
    'grpc.max_reconnect_backoff_ms': 2_000,
    ...(options.maxMessageBytes
      ? {
          'grpc.max_receive_message_length': options.maxMessageBytes,
          'grpc.max_send_message_length': options.maxMessageBytes,
        }
      : {}),
  });
  const shortName = service.name.replace(/Service$/, '').toLowerCase();
  const calls: Record<string, unknown> = { close: () => client.close() };
  for (const method of service.methods) {
    type UnaryCall = (
      request: unknown,
      metadata: grpc.Metadata,
      options: grpc.CallOptions,
      callback: (error: grpc.ServiceError | null, response: unknown) => void,
    ) => void;
    const rpc = (client as unknown as Record<string, UnaryCall>)[method.localName];
    const spanStart = rpcSpanStart(SpanKind.CLIENT, service.typeName, method.name);
    const path = `${service.typeName}/${method.name}`;
    const invoke = (request: unknown, callOptions: { deadlineMs?: number }) =>
      new Promise((resolve, reject) => {
        const metadata = new grpc.Metadata();
        metadata.set(REQUEST_ID_HEADER, currentRequestId() ?? newRequestId());
        if (options.credential) metadata.set(CALLER_CREDENTIAL_METADATA, options.credential);
        if (tracingEnabled()) injectTraceContext(metadataCarrier(metadata));
        const deadline =
          Date.now() + (callOptions.deadlineMs ?? options.defaultDeadlineMs ?? DEFAULT_DEADLINE_MS);
        rpc?.call(
          client,
          request,
          metadata,
          { deadline },
          (error: grpc.ServiceError | null, response: unknown) =>
            error ? reject(fromGrpcError(error, shortName)) : resolve(response),
        );
      });
    calls[method.localName] = (request: unknown, callOptions: { deadlineMs?: number } = {}) =>
      inSpan(path, spanStart, () => invoke(request, callOptions));
  }
  return calls as ServiceClient<S>;
}

/** Starts a gRPC server on `address` (port 0 picks a free one) and returns the bound port. */
export async function startGrpcServer(server: grpc.Server, address: string): Promise<number> {
  return new Promise((resolve, reject) => {
    server.bindAsync(address, grpc.ServerCredentials.createInsecure(), (error, port) =>
      error ? reject(error) : resolve(port),
    );
  });
}

export { grpc };
