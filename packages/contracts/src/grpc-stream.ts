import type * as grpc from '@grpc/grpc-js';

/**
 * Server-streaming calls as async iterables, the way connect-es exposes them, so a handler and a
 * caller read like a loop. Both sides respect the other's pace: the server asks the handler for
 * its next message only once the client can take more (flow control), and a side that stops
 * early (the client hangs up, the consumer breaks out of its loop) ends the other, so a file
 * being streamed is closed rather than read to its end for nobody.
 */
export type ServerStream = grpc.ServerWritableStream<unknown, unknown>;

/**
 * Sends a handler's messages on the call, waiting for 'drain' whenever the client is behind, then
 * ends the call with OK. A client that cancels (or whose deadline passes) stops the handler: its
 * iterator is returned, which runs its `finally` blocks. Answers the status the call ended with.
 */
export async function sendStream(call: ServerStream, messages: AsyncIterable<unknown>): Promise<grpc.status> {
  for await (const message of messages) {
    if (call.cancelled) break;
    if (!call.write(message)) await drainedOrCancelled(call);
    if (call.cancelled) break;
  }
  if (call.cancelled) return CANCELLED;
  call.end();
  return OK;
}

// The numbers of grpc.status (a type-only import keeps this file free of grpc-js at run time).
const OK = 0 as grpc.status;
const CANCELLED = 1 as grpc.status;

function drainedOrCancelled(call: ServerStream): Promise<void> {
  return new Promise((resolve) => {
    const done = () => {
      call.off('drain', done);
      call.off('cancelled', done);
      call.off('close', done);
      resolve();
    };
    call.once('drain', done);
    call.once('cancelled', done);
    call.once('close', done);
  });
}

/**
 * A call's messages as an async iterable. The call starts when iteration does; an error status
 * is thrown as `mapError` says (a ServiceError, like a unary call's), and a consumer that stops
 * early cancels the call, so the server stops reading and sending.
 */
export async function* receiveStream<T>(
  open: () => grpc.ClientReadableStream<unknown>,
  mapError: (error: grpc.ServiceError) => Error,
): AsyncGenerator<T> {
  const call = open();
  let finished = false;
  try {
    for await (const message of call) yield message as T;
    finished = true;
  } catch (error) {
    finished = true;
    throw mapError(error as grpc.ServiceError);
  } finally {
    if (!finished) call.cancel();
  }
}
