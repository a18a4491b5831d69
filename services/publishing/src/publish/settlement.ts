import { eventRow, makeEvent } from '@svc/bus';
import type { WorkspaceDirectory } from '@svc/directory';
import type { Logger } from '@svc/logging';
import type { PostTarget } from '../generated/prisma/client.ts';
import type { TargetOutcome, TargetRef } from '../posts/post-rows.ts';
import type { PostStore } from '../posts/post-store.ts';
import { viewOfPost } from '../posts/post-view.ts';

export type PostOutcome = 'published' | 'partial' | 'failed';

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

/**
 * Recording a target's outcome, and the post's when it was the last one to settle: the post
 * status is derived from its targets and `post.published|partial|failed` is written to the outbox
 * with it. The post's `unsettled` count decides which settlement is the last: it is counted down
 * in the statement that records each target, so of two workers settling the last two targets at
 * once exactly one sees 0.
 */
export class Settlement {
  constructor(
    private readonly store: PostStore,
    private readonly workspaces: Pick<WorkspaceDirectory, 'scope'>,
    private readonly logger: Logger,
    private readonly now: () => Date,
  ) {}

  /** Records the target's outcome; false if it was settled already (nothing recorded). */
  async settleTarget(target: TargetRef, outcome: TargetOutcome): Promise<boolean> {
    const unsettled = await this.store.recordOutcome(target, outcome);
    // At most 0 (never below, unless a count went wrong): settling the post checks its targets anyway.
    if (unsettled !== undefined && unsettled <= 0) await this.settlePost(target.postId);
    return unsettled !== undefined;
  }

  /**
   * The post's outcome, once every target of its attempt has settled: derived from the targets and
   * written with its `post.*` event by one statement. The settlement that counted the post down to
   * 0 gets here, or a redelivered job of a settled target whose worker died before this (see
   * PublishJobs.handle); each reads the targets after its own settlement committed, so the last one
   * sees them all. The write is guarded: a second writer finds the post settled and writes nothing.
   */
  async settlePost(postId: string): Promise<void> {
    const post = await this.store.read(postId);
    if (post?.status !== 'publishing') return;
    const outcome = derivePostOutcome(post.targets);
    if (!outcome) return;
    const times = post.targets.flatMap((t) => (t.publishedAt ? [t.publishedAt.getTime()] : []));
    const settled = {
      ...post,
      status: outcome,
      lastError: lastErrorOf(post.targets),
      publishedAt: times.length > 0 ? new Date(Math.max(...times)) : null,
      updatedAt: this.now(),
    };
    const scope = await this.workspaces.scope(post.workspaceId);
    const event = makeEvent(`post.${outcome}`, scope, { post: viewOfPost(settled) });
    if (await this.store.writeSettlement(settled, eventRow(event)))
      this.logger.info({ post: postId, status: outcome }, 'post settled');
  }
}
