import { type DescMessage, fromBinary, type MessageInitShape, type MessageShape } from '@bufbuild/protobuf';
import type { GenService, GenServiceMethods } from '@bufbuild/protobuf/codegenv2';
import * as grpc from '@grpc/grpc-js';
import { asServiceError, GRPC_STATUS, ServiceError, type WireError } from '@svc/errors';
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
import { receiveStream, type ServerStream, sendStream } from './grpc-stream.ts';
import { endServerSpan, metadataCarrier, rpcSpanStart } from './grpc-trace.ts';
import { encodeMessage } from './message-bytes.ts';

/**
 * The glue between protobuf-es v2 descriptors and @grpc/grpc-js, used by every service.
 * - Paths are `/<package>.<Service>/<Method>`, messages travel as protobuf binary.
 * - A ServiceError crosses the wire as its gRPC status plus `svc-error-bin` metadata and comes back
 *   out of the client as the same ServiceError, so the gateway maps errors in one place.
 * - The caller's request id travels as `x-request-id` metadata; handlers run inside it. With
 *   tracing on, each call is a client span and a server span, linked by `traceparent` metadata.
 * - Every client call has a deadline (a stream's covers all of its messages).
 * - Server-streaming methods are async iterables on both sides: the handler yields its messages
 *   (each sent when the client can take it), the client iterates them; see grpc-stream.ts.
 * The mapped types make a missing method or a misspelled field a compile error.
 */
type Methods<S> = S extends GenService<infer M> ? M : never;
type UnaryMethod = { methodKind: 'unary'; input: DescMessage; output: DescMessage };
type ServerStreamingMethod = { methodKind: 'server_streaming'; input: DescMessage; output: DescMessage };

/** What a handler may know about the call besides its request: the metadata (caller credential). */
export interface CallContext {
  metadata: grpc.Metadata;
}

/** A service of the generated descriptors (`IdentityService`, `PublishingService`...). */
export type GrpcService = GenService<GenServiceMethods>;

export type ServiceImplementation<S extends GenService<GenServiceMethods>> = {
  [K in keyof Methods<S>]: Methods<S>[K] extends UnaryMethod
    ? (
        request: MessageShape<Methods<S>[K]['input']>,
        context: CallContext,
      ) => Promise<MessageInitShape<Methods<S>[K]['output']>>
    : Methods<S>[K] extends ServerStreamingMethod
      ? (
          request: MessageShape<Methods<S>[K]['input']>,
          context: CallContext,
        ) => AsyncIterable<MessageInitShape<Methods<S>[K]['output']>>
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
    : Methods<S>[K] extends ServerStreamingMethod
      ? (
          request: MessageInitShape<Methods<S>[K]['input']>,
          options?: { deadlineMs?: number },
        ) => AsyncIterable<MessageShape<Methods<S>[K]['output']>>
      : never;
} & { close(): void };

/**
 * Options of every gRPC channel and server here: no channelz service is served, so grpc-js's
 * per-call channelz bookkeeping would have no reader.
 */
export const CHANNEL_OPTIONS = { 'grpc.enable_channelz': 0 } as const;

const ERROR_METADATA = 'svc-error-bin';
const DEFAULT_DEADLINE_MS = 10_000;

function serialize(schema: DescMessage, value: unknown): Buffer {
  const bytes = encodeMessage(schema, value);
  // A view of the encoder's own fresh array, not a copy of it (a media chunk is 64 KiB, an
  // upload part more).
  return Buffer.from(bytes.buffer, bytes.byteOffset, bytes.byteLength);
}

function definitionOf(service: GenService<GenServiceMethods>): grpc.ServiceDefinition {
  const definition: Record<string, grpc.MethodDefinition<unknown, unknown>> = {};
  for (const method of service.methods) {
    definition[method.localName] = {
      path: `/${service.typeName}/${method.name}`,
      requestStream: false,
      responseStream: method.methodKind === 'server_streaming',
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
    const impl = (implementation as Record<string, (request: unknown, context: CallContext) => unknown>)[
      method.localName
    ];
    if (!impl) throw new Error(`${service.typeName}.${method.name} has no implementation`);
    const path = `${service.typeName}/${method.name}`;
    const spanStart = rpcSpanStart(SpanKind.SERVER, service.typeName, method.name);
    const streaming = method.methodKind === 'server_streaming';
    handlers[method.localName] = (
      call: grpc.ServerUnaryCall<unknown, unknown> | grpc.ServerWritableStream<unknown, unknown>,
      callback?: grpc.sendUnaryData<unknown>,
    ) => {
      const requestId = String(call.metadata.get(REQUEST_ID_HEADER)[0] ?? newRequestId());
      const started = performance.now();
      const answered = (code: grpc.status) =>
        observe({ method: path, code: grpc.status[code], seconds: (performance.now() - started) / 1000 });
      const start = tracingEnabled() ? { ...spanStart, carrier: metadataCarrier(call.metadata) } : spanStart;
      withRequestId(requestId, () =>
        inSpan(path, start, async (span) => {
          try {
            const result = impl.call(implementation, call.request, { metadata: call.metadata });
            let code = grpc.status.OK;
            if (streaming) code = await sendStream(call as ServerStream, result as AsyncIterable<unknown>);
            else callback?.(null, await result);
            answered(code);
            endServerSpan(span, code);
            logger.debug({ path, duration_ms: Math.round(performance.now() - started) }, 'gRPC call');
          } catch (error) {
            const grpcError = toGrpcError(error, path, logger);
            answered(grpcError.code ?? grpc.status.UNKNOWN);
            endServerSpan(span, grpcError.code ?? grpc.status.UNKNOWN, error);
            logger.debug(
              { path, code: grpcError.code, duration_ms: Math.round(performance.now() - started) },
              'gRPC call failed',
            );
            if (streaming) call.emit('error', grpcError);
            else callback?.(grpcError);
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
  metadata.set(ERROR_METADATA, Buffer.from(JSON.stringify(serviceError.toWire())));
  return { code: GRPC_STATUS[serviceError.code], details: serviceError.message, metadata };
}

function fromGrpcError(error: grpc.ServiceError, serviceName: string): ServiceError {
  const raw = error.metadata?.get(ERROR_METADATA)[0];
  if (raw) return ServiceError.fromBody(JSON.parse(String(raw)) as WireError, error);
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
  options: {
    defaultDeadlineMs?: number;
    credential?: string;
    maxMessageBytes?: number;
    /** How many bytes a call may receive before it acknowledges them (HTTP/2's window; 64 KiB by default). */
    windowBytes?: number;
  } = {},
): ServiceClient<S> {
  const Constructor = grpc.makeGenericClientConstructor(definitionOf(service), service.typeName);
  const client = new Constructor(address, grpc.credentials.createInsecure(), {
    ...CHANNEL_OPTIONS,
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
    ...(options.windowBytes ? { 'grpc-node.flow_control_window': options.windowBytes } : {}),
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
    type StreamCall = (
      request: unknown,
      metadata: grpc.Metadata,
      options: grpc.CallOptions,
    ) => grpc.ClientReadableStream<unknown>;
    const rpc = (client as unknown as Record<string, UnaryCall>)[method.localName];
    const spanStart = rpcSpanStart(SpanKind.CLIENT, service.typeName, method.name);
    const path = `${service.typeName}/${method.name}`;
    const callMetadata = () => {
      const metadata = new grpc.Metadata();
      metadata.set(REQUEST_ID_HEADER, currentRequestId() ?? newRequestId());
      if (options.credential) metadata.set(CALLER_CREDENTIAL_METADATA, options.credential);
      if (tracingEnabled()) injectTraceContext(metadataCarrier(metadata));
      return metadata;
    };
    const deadlineOf = (callOptions: { deadlineMs?: number }) =>
      Date.now() + (callOptions.deadlineMs ?? options.defaultDeadlineMs ?? DEFAULT_DEADLINE_MS);
    if (method.methodKind === 'server_streaming') {
      const open = rpc as unknown as StreamCall;
      calls[method.localName] = (request: unknown, callOptions: { deadlineMs?: number } = {}) =>
        receiveStream(
          () => open.call(client, request, callMetadata(), { deadline: deadlineOf(callOptions) }),
          (error) => fromGrpcError(error, shortName),
        );
      continue;
    }
    const invoke = (request: unknown, callOptions: { deadlineMs?: number }) =>
      new Promise((resolve, reject) => {
        rpc?.call(
          client,
          request,
          callMetadata(),
          { deadline: deadlineOf(callOptions) },
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
