import type { PublishingContext } from '../context.ts';
import { publishJobRow, writeOutbox } from '../events.ts';

/**
 * Starts scheduled posts whose time has come: claimed with SKIP LOCKED, so several replicas share
 * the work and a post starts once. Targets whose account was disconnected meanwhile fail in the
 * worker (spec 3, rule 2); the others publish.
 */
export async function startDuePosts(ctx: PublishingContext, batchSize = 50): Promise<number> {
  const now = ctx.now();
  const started = await ctx.db.$transaction(async (tx) => {
    const due = await tx.$queryRaw<{ id: string; attempts: number }[]>`
      SELECT id, attempts FROM posts WHERE status = 'scheduled' AND schedule_at <= ${now}
      ORDER BY schedule_at LIMIT ${batchSize} FOR UPDATE SKIP LOCKED`;
    for (const post of due) {
      const attempt = post.attempts + 1;
      await tx.post.update({ where: { id: post.id }, data: { status: 'publishing', attempts: attempt } });
      const targets = await tx.postTarget.findMany({
        where: { postId: post.id, status: { not: 'published' } },
      });
      await writeOutbox(tx, { jobs: targets.map((t) => publishJobRow(post.id, t.accountId, attempt)) });
    }
    return due.length;
  });
  if (started > 0) ctx.relay.kick();
  return started;
}
