import type { IdempotencyClaim } from '@svc/contracts';
import { isUniqueViolation } from '@svc/db';
import { errors } from '@svc/errors';
import type { Db } from '../db.ts';

/**
 * The durable half of `Idempotency-Key` on post creation and publishing. The gateway handles the
 * header for every POST (records in Redis, replays of the first answer: gateway
 * `http/idempotency.ts`) and hands its record's id and request hash down here. A post published to
 * a network cannot be taken back, so this claim is kept too, in Postgres beside the post: the key
 * is claimed before the work (so two requests with one key cannot both run), and a retry the
 * gateway's record cannot answer (the gateway died between the write and its record, Redis lost
 * it) gets the same post for 24 h, never a second one. Another request under the key is a 409.
 */
const WINDOW_MS = 24 * 3_600_000;

export async function idempotent(
  ctx: { db: Db; now: () => Date },
  partnerId: string,
  idempotency: IdempotencyClaim | undefined,
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
