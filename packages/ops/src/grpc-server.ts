import { CHANNEL_OPTIONS, grpc } from '@svc/contracts';

/** A grpc-js server; `maxMessageBytes` raises its 4 MiB limit for a service whose messages carry files. */
export function newGrpcServer(maxMessageBytes?: number): grpc.Server {
  return new grpc.Server({
    ...CHANNEL_OPTIONS,
    ...(maxMessageBytes
      ? {
          'grpc.max_receive_message_length': maxMessageBytes,
          'grpc.max_send_message_length': maxMessageBytes,
        }
      : {}),
  });
}

/** Graceful, then forced once the grace is over (a stream that never ends would hold it forever). */
export function shutDown(server: grpc.Server, graceMs: number): Promise<void> {
  return new Promise<void>((resolve) => {
    const force = setTimeout(() => server.forceShutdown(), graceMs);
    force.unref();
    server.tryShutdown(() => {
      clearTimeout(force);
      resolve();
    });
  });
}
