import type { PublishingContext } from '../context.ts';
import { type PostOutcome, postEvent, writeOutbox } from '../events.ts';
import type { PostTarget } from '../generated/prisma/client.ts';

/**
 * Recording a target's outcome, and the post's when it was the last one to settle: the post
 * status is derived from its targets and `post.published|partial|failed` is written to the outbox
 * in the same transaction. The post row is locked meanwhile, so two workers settling the last two
 * targets at once derive the outcome exactly once.
 */
export type TargetOutcome =
  | {
      status: 'published';
      platformPostId: string;
      permalink: string | null;
      publishedAt: Date;
      firstCommentId?: string;
      firstCommentError?: string;
    }
  | { status: 'failed'; error: string };

/** The post outcome once no target is pending, else null. Pure. */
export function derivePostOutcome(targets: Pick<PostTarget, 'status'>[]): PostOutcome | null {
  if (targets.some((t) => t.status !== 'published' && t.status !== 'failed')) return null;
  const published = targets.filter((t) => t.status === 'published').length;
  return published === targets.length ? 'published' : published === 0 ? 'failed' : 'partial';
}

/** `last_error`: each failed target's error prefixed with its network, as the spec shows. */
export function lastErrorOf(targets: Pick<PostTarget, 'status' | 'network' | 'error'>[]): string | null {
  const errors = targets
    .filter((t) => t.status === 'failed')
    .map((t) => `${t.network}: ${t.error ?? 'failed'}`);
  return errors.length > 0 ? errors.join('; ') : null;
}

export async function settleTarget(
  ctx: PublishingContext,
  postId: string,
  accountId: string,
  outcome: TargetOutcome,
): Promise<void> {
  const post = await ctx.db.$transaction(async (tx) => {
    await tx.$queryRaw`SELECT id FROM posts WHERE id = ${postId} FOR UPDATE`;
    await tx.postTarget.update({
      where: { postId_accountId: { postId, accountId } },
      data:
        outcome.status === 'published'
          ? { ...outcome, error: null }
          : { status: 'failed', error: outcome.error },
    });
    const current = await tx.post.findUniqueOrThrow({ where: { id: postId }, include: { targets: true } });
    const result = current.status === 'publishing' ? derivePostOutcome(current.targets) : null;
    if (!result) return null;
    const published = current.targets.flatMap((t) => (t.publishedAt ? [t.publishedAt] : []));
    const settled = await tx.post.update({
      where: { id: postId },
      data: {
        status: result,
        lastError: lastErrorOf(current.targets),
        publishedAt: published.length > 0 ? new Date(Math.max(...published.map((d) => d.getTime()))) : null,
      },
      include: { targets: true },
    });
    await writeOutbox(tx, { events: [await postEvent(ctx, result, settled)] });
    return settled;
  });
  if (post) {
    ctx.relay.kick();
    ctx.logger.info({ post: postId, status: post.status }, 'post settled');
  }
}
