import { createHash } from 'node:crypto';
import { errors } from '@svc/errors';
import type { FastifyReply, FastifyRequest } from 'fastify';

const IDEMPOTENCY_KEY = /^[\x21-\x7e]{1,255}$/;

/**
 * The client's `Idempotency-Key` with a hash of what it asked (method, path, query, body), so
 * the same key with another request is told apart (409) from a retry (the first answer again).
 * The owning service keeps the key with what it created, in the same transaction.
 */
export function idempotencyOf(request: FastifyRequest) {
  const key = request.headers['idempotency-key'];
  if (key === undefined) return undefined;
  if (typeof key !== 'string' || !IDEMPOTENCY_KEY.test(key))
    throw errors.validation('Idempotency-Key', 'Idempotency-Key must be 1-255 printable ASCII characters');
  const requestHash = createHash('sha256')
    .update(JSON.stringify([request.method, request.url, request.body ?? null]))
    .digest('hex');
  return { key, requestHash };
}

/** A replayed answer says so, as Stripe's does. */
export function markReplay(reply: FastifyReply, replayed: boolean): void {
  if (replayed) reply.header('Idempotent-Replayed', 'true');
}
