import { eventRow, makeEvent, type OutboxRow } from '@svc/bus';
import { GroupCommit } from '@svc/db';
import type { WorkspaceDirectory } from '@svc/directory';
import type { Logger } from '@svc/logging';
import type { Post, PostTarget } from '../generated/prisma/client.ts';
import type { PostWithTargets, TargetOutcome, TargetRef } from '../posts/post-rows.ts';
import type { PostStore } from '../posts/post-store.ts';
import { viewOfPost } from '../posts/post-view.ts';

export type PostOutcome = 'published' | 'partial' | 'failed';

interface PostToSettle {
  postId: string;
  error?: unknown;
}

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
 * once exactly one sees 0. Posts settling at the same moment are read in one statement and
 * written in another (group commit, as the target steps are).
 */
export class Settlement {
  private readonly posts = new GroupCommit<PostToSettle>((batch) => this.settleBatch(batch), {
    busyGatherMs: 8,
  });

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
    const item: PostToSettle = { postId };
    await this.posts.add(item);
    if (item.error !== undefined) throw item.error;
  }

  /** A batch of posts; a post whose event cannot be made fails its own caller only. */
  private async settleBatch(batch: PostToSettle[]): Promise<void> {
    const posts = await this.store.readMany([...new Set(batch.map((item) => item.postId))]);
    const made = await Promise.allSettled(posts.map((post) => this.settlementOf(post)));
    made.forEach((result, index) => {
      if (result.status === 'fulfilled') return;
      for (const item of batch) if (item.postId === posts[index]?.id) item.error = result.reason;
    });
    const settlements = made.flatMap((result) => (result.status === 'fulfilled' && result.value) || []);
    const settled = await this.store.writeSettlements(settlements);
    for (const { post } of settlements) {
      if (settled.has(post.id)) this.logger.info({ post: post.id, status: post.status }, 'post settled');
    }
  }

  /** The post as settled and its event, or null while a target is pending or once settled. */
  private async settlementOf(post: PostWithTargets): Promise<{ post: Post; event: OutboxRow } | null> {
    if (post.status !== 'publishing') return null;
    const outcome = derivePostOutcome(post.targets);
    if (!outcome) return null;
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
    return { post: settled, event: eventRow(event) };
  }
}
