import type { FastifyReply, FastifyRequest } from 'fastify';

/**
 * How much of an unread body a refusal waits for. Past either bound the answer goes out at once
 * and the connection closes, so a huge or trickling body cannot hold a connection for long;
 * discarding bytes costs next to no CPU. 64 MiB is eight times the largest body we accept (an
 * 8 MiB upload), so any body a partner sends by mistake is drained.
 */
const DRAIN_MAX_BYTES = 64 * 1024 * 1024;
const DRAIN_MAX_MS = 10_000;
/** How long, and how much more, a connection that stops after its answer reads before it closes. */
const LINGER_MAX_MS = 2_000;
const LINGER_MAX_BYTES = 16 * 1024 * 1024;

/**
 * A refusal made before the body was read (over the size limit, a bad key, a broken form) is sent
 * only once the client has finished sending, and on a connection that stays open. Answering
 * earlier and closing, as Fastify does after a body error, resets the connection under a client
 * still writing: fetch/undici then fails with EPIPE and never sees the answer (curl reads it).
 */
export async function drainUnreadBody(request: FastifyRequest, reply: FastifyReply): Promise<void> {
  const raw = request.raw;
  if (!raw.complete) {
    const drained = await new Promise<boolean>((resolve) => {
      let bytes = 0;
      const finish = (complete: boolean) => {
        clearTimeout(timer);
        raw.off('data', onData).off('end', onEnd).off('error', onError).off('close', onError);
        resolve(complete);
      };
      const onData = (chunk: Buffer) => {
        bytes += chunk.length;
        if (bytes > DRAIN_MAX_BYTES) finish(false);
      };
      const onEnd = () => finish(true);
      const onError = () => finish(raw.complete);
      const timer = setTimeout(() => finish(false), DRAIN_MAX_MS);
      raw.on('data', onData).once('end', onEnd).once('error', onError).once('close', onError);
      raw.resume();
    });
    if (!drained) {
      reply.header('connection', 'close');
      lingerAfterAnswer(request, reply);
      return;
    }
  }
  // Everything the client sent has been read: the connection can serve its next request.
  reply.removeHeader('connection');
}

/**
 * Closing a socket with unread bytes resets the connection, and the reset can reach a client still
 * writing before it has read the answer (seen under load: the client read nothing at all). So the
 * answer goes out, the connection is half-closed, and what the client still sends once the answer
 * is written is read and thrown away, within bounds, before the socket closes: a lingering close,
 * as web servers do.
 */
function lingerAfterAnswer(request: FastifyRequest, reply: FastifyReply): void {
  const { raw } = request;
  const socket = raw.socket;
  const timer = setTimeout(() => socket.destroy(), LINGER_MAX_MS);
  socket.once('close', () => clearTimeout(timer));
  // Node destroys a socket once an answer marked `Connection: close` is written: end it instead.
  socket.destroySoon = () => socket.end();
  // Counted from the answer on: bytes that came before it must not close the socket unanswered.
  reply.raw.once('finish', () => {
    let bytes = 0;
    raw.on('data', (chunk: Buffer) => {
      bytes += chunk.length;
      if (bytes > LINGER_MAX_BYTES) socket.destroy();
    });
  });
}
