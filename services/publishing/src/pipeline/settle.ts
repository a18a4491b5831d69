import { transaction } from '@svc/db';
import type { PublishingContext } from '../context.ts';
import { eventRow, outboxColumns, type PostOutcome, postEvent } from '../events.ts';
import type { PostTarget } from '../generated/prisma/client.ts';
import { POST_COLUMNS, postFromRow, TARGET_COLUMNS, targetFromRow } from '../posts/rows.ts';
import type { ClaimedTarget } from './targets.ts';

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
  target: Pick<ClaimedTarget, 'postId' | 'accountId'>,
  outcome: TargetOutcome,
): Promise<void> {
  const { postId, accountId } = target;
  const settled = await transaction(ctx.pool, async (tx) => {
    // The lock comes first, in its own statement: the targets read next then see every sibling
    // settled before it, so exactly one of two concurrent last settlements derives the outcome.
    const locked = await tx.query({ ...LOCK_POST, values: [postId] });
    if (!locked.rows[0]) return null; // the workspace was deleted meanwhile
    const post = postFromRow(locked.rows[0]);
    const published = outcome.status === 'published' ? outcome : undefined;
    const targets = await tx.query({
      ...RECORD_OUTCOME,
      values: [
        postId,
        accountId,
        outcome.status,
        outcome.status === 'failed' ? outcome.error : null,
        published?.platformPostId ?? null,
        published?.permalink ?? null,
        published?.publishedAt ?? null,
        published?.firstCommentId ?? null,
        published?.firstCommentError ?? null,
      ],
    });
    const current = targets.rows.map(targetFromRow);
    const result = post.status === 'publishing' ? derivePostOutcome(current) : null;
    if (!result) return null;
    const times = current.flatMap((t) => (t.publishedAt ? [t.publishedAt.getTime()] : []));
    const outcomePost = {
      ...post,
      status: result,
      lastError: lastErrorOf(current),
      publishedAt: times.length > 0 ? new Date(Math.max(...times)) : null,
      updatedAt: ctx.now(),
      targets: current,
    };
    // The post's new state and its event are written by one statement.
    const rows = [eventRow(await postEvent(ctx, result, outcomePost))];
    await tx.query({
      ...SETTLE_POST,
      values: [
        postId,
        result,
        outcomePost.lastError,
        outcomePost.publishedAt,
        outcomePost.updatedAt,
        ...outboxColumns(rows),
      ],
    });
    return { status: result, rows };
  });
  if (settled) {
    void ctx.relay.publishCommitted(settled.rows);
    ctx.logger.info({ post: postId, status: settled.status }, 'post settled');
  }
}

const LOCK_POST = {
  name: 'publishing_lock_post',
  text: `SELECT ${POST_COLUMNS} FROM posts WHERE id = $1 FOR UPDATE`,
};

/**
 * Records the target's outcome and answers every target of the post as it now stands. A
 * published outcome clears the error; a failure keeps what the target recorded before.
 */
const RECORD_OUTCOME = {
  name: 'publishing_record_outcome',
  text: `
WITH recorded AS (
  UPDATE post_targets
     SET status = $3, error = $4,
         platform_post_id = coalesce($5, platform_post_id), permalink = coalesce($6, permalink),
         published_at = coalesce($7, published_at), first_comment_id = coalesce($8, first_comment_id),
         first_comment_error = coalesce($9, first_comment_error), updated_at = now()
   WHERE post_id = $1 AND account_id = $2
  RETURNING ${TARGET_COLUMNS}
)
SELECT * FROM recorded
UNION ALL
SELECT ${TARGET_COLUMNS} FROM post_targets WHERE post_id = $1 AND account_id <> $2`,
};

const SETTLE_POST = {
  name: 'publishing_settle_post',
  text: `
WITH settled AS (
  UPDATE posts SET status = $2, last_error = $3, published_at = $4, updated_at = $5 WHERE id = $1
)
INSERT INTO outbox (id, subject, payload, request_id)
SELECT * FROM unnest($6::text[], $7::text[], $8::jsonb[], $9::text[])`,
};
