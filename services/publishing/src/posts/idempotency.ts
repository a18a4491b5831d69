import { isUniqueViolation } from '@svc/db';
import { errors } from '@svc/errors';
import type { Db } from '../db.ts';

/**
 * `Idempotency-Key` on post creation and publishing: a client that retries after a timeout must
 * never double-post. The key is claimed before the work (so two concurrent requests with one key
 * cannot both run), and answers a retry for 24 h with the same post. Another request under the
 * same key is a 409 conflict.
 */
const WINDOW_MS = 24 * 3_600_000;

export interface Idempotency {
  key: string;
  requestHash: string;
}

export async function idempotent(
  ctx: { db: Db; now: () => Date },
  partnerId: string,
  idempotency: Idempotency | undefined,
  run: () => Promise<string>,
): Promise<{ postId: string; replayed: boolean }> {
  if (!idempotency?.key) return { postId: await run(), replayed: false };
  const id = { partnerId_key: { partnerId, key: idempotency.key } };
  await ctx.db.idempotencyKey.deleteMany({
    where: { partnerId, key: idempotency.key, createdAt: { lt: new Date(ctx.now().getTime() - WINDOW_MS) } },
  });
  try {
    await ctx.db.idempotencyKey.create({
      data: {
        partnerId,
        key: idempotency.key,
        requestHash: idempotency.requestHash,
        status: 0,
        response: {},
      },
    });
  } catch (error) {
    if (!isUniqueViolation(error)) throw error;
    const earlier = await ctx.db.idempotencyKey.findUnique({ where: id });
    if (!earlier) throw errors.conflict('a request with this Idempotency-Key changed meanwhile; retry');
    if (earlier.requestHash !== idempotency.requestHash)
      throw errors.conflict('this Idempotency-Key was used for a different request');
    const postId = (earlier.response as { post_id?: string }).post_id;
    if (!postId)
      throw errors.conflict('a request with this Idempotency-Key is still in progress; retry shortly');
    return { postId, replayed: true };
  }
  try {
    const postId = await run();
    await ctx.db.idempotencyKey.update({ where: id, data: { status: 200, response: { post_id: postId } } });
    return { postId, replayed: false };
  } catch (error) {
    // Nothing was done: the key is free again, so the client's retry can succeed.
    await ctx.db.idempotencyKey.delete({ where: id }).catch(() => {});
    throw error;
  }
}

/** Keys past the 24 h window; idempotent, so any replica may run it. */
export async function purgeIdempotencyKeys(ctx: { db: Db; now: () => Date }): Promise<void> {
  await ctx.db.idempotencyKey.deleteMany({
    where: { createdAt: { lt: new Date(ctx.now().getTime() - WINDOW_MS) } },
  });
}
