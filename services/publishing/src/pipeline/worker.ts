import { ServiceError } from '@svc/errors';
import { GraphApiError } from '@svc/graph-client';
import type { PublishingContext } from '../context.ts';
import type { Media, Post, PostTarget } from '../generated/prisma/client.ts';
import { DAILY_PHOTO_LIMIT, usedToday } from '../posts/publishing-limit.ts';
import { PublishRefused, publishToInstagram } from './instagram.ts';
import { publishToPage } from './page.ts';
import { settleTarget } from './settle.ts';

/**
 * One publish job = one target of one post. Idempotent: a settled target is skipped, so a
 * redelivered job (crash, timeout) never posts twice; a half-done one resumes from what was
 * recorded. Provider refusals fail the target with the provider's message (failed posts are never
 * retried automatically); our own faults (database, bus) leave the job for redelivery.
 */
export interface PublishJob {
  post_id: string;
  account_id: string;
  attempt: number;
}

export interface TargetJob {
  post: Post;
  target: PostTarget;
  media: Media[];
  token: string;
  /** The network's id of the account (Instagram user id or Page id). */
  platformId: string;
}

export interface Published {
  platformPostId: string;
  permalink: string | null;
}

export async function handlePublishJob(ctx: PublishingContext, job: PublishJob): Promise<void> {
  const target = await ctx.db.postTarget.findUnique({
    where: { postId_accountId: { postId: job.post_id, accountId: job.account_id } },
    include: { post: true },
  });
  if (!target || target.status === 'published' || target.status === 'failed') return;
  if (target.post.attempts !== job.attempt) return; // a job of an earlier attempt
  const { post, ...row } = target;
  await ctx.db.postTarget.update({
    where: { postId_accountId: { postId: post.id, accountId: row.accountId } },
    data: { status: 'publishing' },
  });
  const fail = (error: string) => settleTarget(ctx, post.id, row.accountId, { status: 'failed', error });

  const vault = await readToken(ctx, row.accountId);
  if ('error' in vault) return fail(vault.error);
  if (row.network === 'photo_network') {
    const used = await usedToday(ctx, row.accountId);
    if (used >= DAILY_PHOTO_LIMIT && !row.containerId)
      return fail(
        `daily publishing limit reached (${DAILY_PHOTO_LIMIT} posts per rolling 24 hours); try again later`,
      );
  }
  const media = await ctx.db.media.findMany({ where: { id: { in: post.mediaIds } } });
  const ordered = post.mediaIds.flatMap((id) => media.filter((m) => m.id === id));
  const targetJob: TargetJob = {
    post,
    target: row,
    media: ordered,
    token: vault.token,
    platformId: vault.platformId,
  };
  try {
    const result =
      row.network === 'photo_network'
        ? await publishToInstagram(ctx, targetJob)
        : await publishToPage(ctx, targetJob);
    const firstComment = await postFirstComment(ctx, targetJob, result.platformPostId);
    await settleTarget(ctx, post.id, row.accountId, {
      status: 'published',
      ...result,
      ...firstComment,
      publishedAt: ctx.now(),
    });
  } catch (error) {
    if (error instanceof PublishRefused) return fail(error.message);
    if (!(error instanceof GraphApiError)) throw error;
    await reportTokenProblem(ctx, row.accountId, error);
    return fail(error.message);
  }
}

/**
 * `options.first_comment`, posted right after the target is published. Its failure is reported
 * on the target (`first_comment_error`) and does not fail the post: the post itself is live.
 */
async function postFirstComment(
  ctx: PublishingContext,
  job: TargetJob,
  platformPostId: string,
): Promise<{ firstCommentId?: string; firstCommentError?: string }> {
  const text = (job.post.options as { first_comment?: unknown }).first_comment;
  if (typeof text !== 'string' || text === '') return {};
  try {
    const comment =
      job.target.network === 'photo_network'
        ? await ctx.graph.inbox.commentOnInstagramMedia(job.token, platformPostId, text)
        : await ctx.graph.inbox.commentOnPageObject(job.token, platformPostId, text);
    return { firstCommentId: comment.id };
  } catch (error) {
    if (!(error instanceof GraphApiError)) throw error;
    return { firstCommentError: error.message };
  }
}

async function readToken(
  ctx: PublishingContext,
  accountId: string,
): Promise<{ token: string; platformId: string } | { error: string }> {
  try {
    const { token, account } = await ctx.accounts.getAccountToken({ accountId });
    return { token, platformId: account?.platformId ?? '' };
  } catch (error) {
    if (
      error instanceof ServiceError &&
      (error.code === 'account_disconnected' || error.code === 'not_found')
    )
      return { error: `the account was disconnected before publishing: ${error.message}` };
    throw error;
  }
}

/** A dead token also changes the account's status (through accounts), so the partner learns of it. */
async function reportTokenProblem(ctx: PublishingContext, accountId: string, error: GraphApiError) {
  const problem = error.tokenProblem;
  if (!problem) return;
  await ctx.accounts
    .reportTokenProblem({
      accountId,
      problem,
      message: error.message,
      subcode: Number(error.details?.subcode ?? 0),
    })
    .catch((err: unknown) => ctx.logger.warn({ err }, 'could not report a token problem to accounts'));
}
