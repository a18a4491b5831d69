import type { PublishingContext } from '../context.ts';
import { eventRow, outboxColumns, type PostOutcome, postEvent } from '../events.ts';
import type { PostTarget } from '../generated/prisma/client.ts';
import { readPost } from '../posts/rows.ts';
import type { ClaimedTarget } from './targets.ts';

/**
 * Recording a target's outcome, and the post's when it was the last one to settle: the post
 * status is derived from its targets and `post.published|partial|failed` is written to the outbox
 * with it. The post's `unsettled` count decides which settlement is the last: it is counted down
 * in the statement that records each target, so of two workers settling the last two targets at
 * once exactly one sees 0.
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
  const published = outcome.status === 'published' ? outcome : undefined;
  const { rows } = await ctx.pool.query<{ unsettled: number }>({
    ...RECORD_OUTCOME,
    values: [
      target.postId,
      target.accountId,
      outcome.status,
      outcome.status === 'failed' ? outcome.error : null,
      published?.platformPostId ?? null,
      published?.permalink ?? null,
      published?.publishedAt ?? null,
      published?.firstCommentId ?? null,
      published?.firstCommentError ?? null,
    ],
  });
  // At most 0 (never below, unless a count went wrong): settling the post checks its targets anyway.
  if (rows[0] && rows[0].unsettled <= 0) await settlePost(ctx, target.postId);
}

/**
 * The post's outcome, once every target of its attempt has settled: derived from the targets and
 * written with its `post.*` event by one statement. The settlement that counted the post down to 0
 * gets here, or a redelivered job of a settled target whose worker died before this (see
 * handlePublishJob); each reads the targets after its own settlement committed, so the last one
 * sees them all. The write is guarded: a second writer finds the post settled and writes nothing.
 */
export async function settlePost(ctx: PublishingContext, postId: string): Promise<void> {
  const post = await readPost(ctx.pool, postId);
  if (post?.status !== 'publishing') return;
  const result = derivePostOutcome(post.targets);
  if (!result) return;
  const times = post.targets.flatMap((t) => (t.publishedAt ? [t.publishedAt.getTime()] : []));
  const settled = {
    ...post,
    status: result,
    lastError: lastErrorOf(post.targets),
    publishedAt: times.length > 0 ? new Date(Math.max(...times)) : null,
    updatedAt: ctx.now(),
  };
  const rows = [eventRow(await postEvent(ctx, result, settled))];
  const written = await ctx.pool.query({
    ...SETTLE_POST,
    values: [
      postId,
      result,
      settled.lastError,
      settled.publishedAt,
      settled.updatedAt,
      ...outboxColumns(rows),
    ],
  });
  if (written.rowCount === 0) return;
  void ctx.relay.publishCommitted(rows);
  ctx.logger.info({ post: postId, status: result }, 'post settled');
}

/**
 * Records the target's outcome and counts its post down, in one statement (atomic without a
 * transaction block), answering how many targets are left. A target settled already is left as
 * it is and counts nothing: a redelivered job cannot count a post down twice. A published
 * outcome clears the error; a failure keeps what the target recorded before.
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
   WHERE post_id = $1 AND account_id = $2 AND status NOT IN ('published', 'failed')
  RETURNING post_id
)
UPDATE posts SET unsettled = unsettled - 1
 WHERE id = (SELECT post_id FROM recorded) AND status = 'publishing'
RETURNING unsettled`,
};

/** The post's outcome and its event, written only while the post is still publishing. */
const SETTLE_POST = {
  name: 'publishing_settle_post',
  text: `
WITH settled AS (
  UPDATE posts SET status = $2, last_error = $3, published_at = $4, updated_at = $5
   WHERE id = $1 AND status = 'publishing'
  RETURNING id
)
INSERT INTO outbox (id, subject, payload, request_id)
SELECT o.* FROM unnest($6::text[], $7::text[], $8::jsonb[], $9::text[]) AS o
 WHERE EXISTS (SELECT 1 FROM settled)`,
};
