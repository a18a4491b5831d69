import type { PublishJob } from '@svc/bus';
import { type AccountsDirectory, type AccountToken, accountGone } from '@svc/directory';
import { ServiceError } from '@svc/errors';
import { GraphApiError } from '@svc/graph-client';
import type { ClaimedTarget, Published, TargetOutcome } from '../posts/post-rows.ts';
import { DAILY_PHOTO_LIMIT, windowStart } from '../posts/publishing-limit.ts';
import { MAX_WAIT_MINUTES, processingCheckTime, retryTimeOf } from './deferral.ts';
import { InstagramPublisher } from './instagram.ts';
import {
  type NetworkPublisher,
  type NetworkTools,
  PublishRefused,
  StillProcessing,
} from './network-publisher.ts';
import { PagePublisher } from './page.ts';
import type { PublishMetrics } from './publish-metrics.ts';
import type { Settlement } from './settlement.ts';

/**
 * Publish jobs: claimed and carried out. A job (`PublishJob`, `SUBJECTS.publishJob` in the
 * catalog) is one target of one post for one attempt, on the JOBS work queue, written to the
 * outbox with the post by the post store. Idempotent: a settled target is skipped, so a
 * redelivered job (crash, timeout) never posts twice; a half-done one resumes from what was
 * recorded. Provider refusals fail the target with the provider's message (failed posts are never
 * retried automatically); a throttled account or a network that is down defers the target (see
 * deferral.ts); our own faults (database, bus) leave the job for redelivery.
 */
export class PublishJobs {
  private readonly networks: Record<string, NetworkPublisher>;

  constructor(
    private readonly tools: NetworkTools & {
      accounts: AccountsDirectory;
      settlement: Settlement;
      metrics: PublishMetrics;
    },
  ) {
    this.networks = { photo_network: new InstagramPublisher(tools), page_network: new PagePublisher(tools) };
  }

  async handle(job: PublishJob): Promise<void> {
    const { store, accounts, settlement } = this.tools;
    // The token is asked for beside the claim (the job names the account): it is wasted only on a
    // redelivered job whose target settled already.
    const now = this.tools.now();
    const [target, account] = await Promise.all([
      store.claimTarget(job, windowStart(now), now),
      tokenFor(accounts, job.account_id),
    ]);
    // Settled already (a redelivered job), superseded, or deferred to later. Its settlement may have
    // counted the post down to 0 and then died before settling the post: that is finished here.
    if (!target) return settlement.settlePost(job.post_id);
    try {
      await this.carryOut(target, account);
    } catch (error) {
      this.tools.metrics.outcome(target.network, 'retried');
      throw error;
    }
  }

  /** Publishes the claimed target and settles it; what throws is left for redelivery. */
  private async carryOut(target: ClaimedTarget, account: AccountToken | { error: string }): Promise<void> {
    const { accounts, settlement, metrics } = this.tools;
    const settle = async (outcome: TargetOutcome) => {
      // Counted once per target: a second settlement of a settled target records nothing.
      if (await settlement.settleTarget(target, outcome)) metrics.outcome(target.network, outcome.status);
    };
    const fail = (error: string) => settle({ status: 'failed', error });
    if ('error' in account) return fail(account.error);
    const refusal = dailyLimitRefusal(target);
    if (refusal) return fail(refusal);
    try {
      const published = await this.publish(target, account);
      await settle({ status: 'published', ...published, publishedAt: this.tools.now() });
    } catch (error) {
      if (error instanceof PublishRefused) return fail(error.message);
      if (error instanceof StillProcessing) return this.awaitProcessing(target, error, fail);
      // Our own refusal of the media (a file over the pixel budget or one that does not decode):
      // the same on every redelivery, so the target fails now.
      if (error instanceof ServiceError && error.code === 'unsupported') return fail(error.message);
      if (!(error instanceof GraphApiError)) throw error;
      const retryAt = retryTimeOf(error, target, this.tools.now());
      if (retryAt) return this.defer(target, retryAt, { kind: error.kind, err: error.message });
      await accounts.reportTokenProblem(target.accountId, account.token, error);
      return fail(error.message);
    }
  }

  /** The network processes the media (a video): checked again later, the slot given back meanwhile. */
  private async awaitProcessing(
    target: ClaimedTarget,
    processing: StillProcessing,
    fail: (error: string) => Promise<void>,
  ): Promise<void> {
    const checkAt = processingCheckTime(target, this.tools.now());
    if (!checkAt)
      return fail(`the network did not finish processing the media within ${MAX_WAIT_MINUTES} minutes`);
    await this.tools.store.defer(target, checkAt, this.tools.now());
    this.tools.metrics.outcome(target.network, 'processing');
    this.tools.logger.debug({ post: target.postId, account: target.accountId, checkAt }, processing.message);
  }

  /** Leaves the target publishing until `retryAt`, when the worker's scheduler queues its job again. */
  private async defer(
    target: ClaimedTarget,
    retryAt: Date,
    why: { kind: string; err: string },
  ): Promise<void> {
    await this.tools.store.defer(target, retryAt, this.tools.now());
    this.tools.metrics.outcome(target.network, 'deferred');
    this.tools.logger.warn(
      { post: target.postId, account: target.accountId, retryAt, ...why },
      'the network cannot take this target now; deferred',
    );
  }

  /** The target published, then its first comment (whose failure is reported, not fatal). */
  private async publish(target: ClaimedTarget, account: AccountToken) {
    const network = this.networks[target.network];
    if (!network) throw new PublishRefused(`unknown network ${target.network}`);
    const published = await network.publish(target, account);
    return { ...published, ...(await this.postFirstComment(target, account, published)) };
  }

  /**
   * `options.first_comment`, posted right after the target is published. Its failure is reported
   * on the target (`first_comment_error`) and does not fail the post: the post itself is live.
   */
  private async postFirstComment(target: ClaimedTarget, { token }: AccountToken, published: Published) {
    const text = target.options.first_comment;
    if (typeof text !== 'string' || text === '') return {};
    const { inbox } = this.tools.graph;
    try {
      const comment =
        target.network === 'photo_network'
          ? await inbox.commentOnInstagramMedia(token, published.platformPostId, text)
          : await inbox.commentOnPageObject(token, published.platformPostId, text);
      return { firstCommentId: comment.id };
    } catch (error) {
      if (!(error instanceof GraphApiError)) throw error;
      return { firstCommentError: error.message };
    }
  }
}

/** The daily limit applies before anything is sent (a resumed job has sent already). */
function dailyLimitRefusal(target: ClaimedTarget): string | undefined {
  const limited = target.network === 'photo_network' && !target.containerId;
  if (limited && target.publishedInWindow >= DAILY_PHOTO_LIMIT)
    return `daily publishing limit reached (${DAILY_PHOTO_LIMIT} posts per rolling 24 hours); try again later`;
  return undefined;
}

/** The account's token for a publish job, or why there is none: the account is gone, or no longer active. */
async function tokenFor(
  accounts: AccountsDirectory,
  accountId: string,
): Promise<AccountToken | { error: string }> {
  try {
    return await accounts.token(accountId);
  } catch (error) {
    if (accountGone(error))
      return { error: `the account was disconnected before publishing: ${error.message}` };
    throw error;
  }
}
