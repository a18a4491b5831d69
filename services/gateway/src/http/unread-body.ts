import type { FastifyReply, FastifyRequest } from 'fastify';

/**
 * How much of an unread body a refusal waits for. Past either bound the answer goes out at once
 * and the connection closes, so a huge or trickling body cannot hold a connection for long;
 * discarding bytes costs next to no CPU. 64 MiB is eight times the largest body we accept (an
 * 8 MiB upload), so any body a partner sends by mistake is drained.
 */
const DRAIN_MAX_BYTES = 64 * 1024 * 1024;
const DRAIN_MAX_MS = 10_000;

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
      return;
    }
  }
  // Everything the client sent has been read: the connection can serve its next request.
  reply.removeHeader('connection');
}
