import { ServiceError } from '@svc/errors';
import { GraphApiError } from '@svc/graph-client';
import type { PublishingContext } from '../context.ts';
import type { AccountToken } from '../kept-accounts.ts';
import { DAILY_PHOTO_LIMIT, windowStart } from '../posts/publishing-limit.ts';
import { PublishRefused, publishToInstagram } from './instagram.ts';
import { publishToPage } from './page.ts';
import { settlePost, settleTarget } from './settle.ts';
import { type ClaimedTarget, claimTarget } from './targets.ts';

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
  target: ClaimedTarget;
  token: string;
  /** The network's id of the account (Instagram user id or Page id). */
  platformId: string;
}

export interface Published {
  platformPostId: string;
  permalink: string | null;
}

export async function handlePublishJob(ctx: PublishingContext, job: PublishJob): Promise<void> {
  // The token is asked for beside the claim (the job names the account): it is wasted only on a
  // redelivered job whose target settled already.
  const [target, vault] = await Promise.all([
    claimTarget(ctx.pool, job, windowStart(ctx)),
    readToken(ctx, job.account_id),
  ]);
  // Settled already (a redelivered job), or superseded. Its settlement may have counted the post
  // down to 0 and then died before settling the post: that is finished here.
  if (!target) return settlePost(ctx, job.post_id);
  const fail = (error: string) => settleTarget(ctx, target, { status: 'failed', error });
  if ('error' in vault) return fail(vault.error);
  // The daily limit applies before anything is sent (a resumed job has sent already).
  const limited = target.network === 'photo_network' && !target.containerId;
  if (limited && target.publishedInWindow >= DAILY_PHOTO_LIMIT)
    return fail(
      `daily publishing limit reached (${DAILY_PHOTO_LIMIT} posts per rolling 24 hours); try again later`,
    );
  const targetJob: TargetJob = { target, token: vault.token, platformId: vault.platformId };
  try {
    const result =
      target.network === 'photo_network'
        ? await publishToInstagram(ctx, targetJob)
        : await publishToPage(ctx, targetJob);
    const firstComment = await postFirstComment(ctx, targetJob, result.platformPostId);
    await settleTarget(ctx, target, {
      status: 'published',
      ...result,
      ...firstComment,
      publishedAt: ctx.now(),
    });
  } catch (error) {
    if (error instanceof PublishRefused) return fail(error.message);
    if (!(error instanceof GraphApiError)) throw error;
    await reportTokenProblem(ctx, targetJob, error);
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
  const text = job.target.options.first_comment;
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
): Promise<AccountToken | { error: string }> {
  try {
    return await ctx.tokens.get(accountId);
  } catch (error) {
    if (
      error instanceof ServiceError &&
      (error.code === 'account_disconnected' || error.code === 'not_found')
    )
      return { error: `the account was disconnected before publishing: ${error.message}` };
    throw error;
  }
}

/**
 * A dead token also changes the account's status (through accounts), so the partner learns of it.
 * The kept token is dropped first; when accounts now holds another one (the account was reconnected
 * and its announcement has not arrived yet), the refusal was of the old token and is not reported.
 */
async function reportTokenProblem(ctx: PublishingContext, job: TargetJob, error: GraphApiError) {
  const problem = error.tokenProblem;
  if (!problem) return;
  const accountId = job.target.accountId;
  ctx.tokens.forget(accountId);
  const current = await ctx.tokens.get(accountId).catch(() => undefined);
  if (current && current.token !== job.token) return;
  await ctx.accounts
    .reportTokenProblem({
      accountId,
      problem,
      message: error.message,
      subcode: Number(error.details?.subcode ?? 0),
    })
    .catch((err: unknown) => ctx.logger.warn({ err }, 'could not report a token problem to accounts'));
}
