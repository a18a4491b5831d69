import type { PostFormat, ReelView } from '@svc/contracts/public';
import { type Caller, found, inScope } from '@svc/db';
import { errors } from '@svc/errors';
import { newId } from '@svc/ids';
import type { PostChecks } from './post-checks.ts';
import { initialStatus, type PostInput, type PostPatch } from './post-input.ts';
import type { PostQuery, PostWithTargets } from './post-rows.ts';
import type { PostStore } from './post-store.ts';
import { pendingTarget } from './post-view.ts';

const EDITABLE = ['draft', 'scheduled', 'failed', 'partial'];

/** The targets (and their formats) of a change that are still to publish. */
function onlyUnsettled<T extends { accountIds: string[]; formats: PostFormat[] }>(
  input: T,
  keep: boolean[],
): T {
  return {
    ...input,
    accountIds: input.accountIds.filter((_, index) => keep[index]),
    formats: input.formats.filter((_, index) => keep[index]),
  };
}

/**
 * Posts: create (draft, scheduled or publishing at once), read, list, change and publish. Every
 * check runs before anything is written or sent; a post that publishes writes one job per target
 * with it, atomically, so a crash never loses a post nor queues it twice.
 */
export class Posts {
  constructor(
    private readonly store: PostStore,
    private readonly checks: PostChecks,
    private readonly workspaces: { assertOwned(caller: Caller, workspaceId: string): Promise<void> },
    private readonly now: () => Date,
  ) {}

  /** A post of the caller's scope; another partner's or workspace's is not_found. */
  async get(caller: Caller, id: string): Promise<PostWithTargets> {
    const post = await this.store.read(id);
    return found(post && inScope(caller, post) ? post : null, 'post');
  }

  list(caller: Caller, query: PostQuery) {
    return this.store.list(caller, query);
  }

  /** The checks every new post passes (a dry run runs them too); a missing workspace answers first. */
  async check(caller: Caller, input: PostInput) {
    const [workspace, checked] = await Promise.allSettled([
      this.workspaces.assertOwned(caller, input.workspaceId),
      this.checks.check(caller, input),
    ]);
    if (workspace.status === 'rejected') throw workspace.reason;
    if (checked.status === 'rejected') throw checked.reason;
    return checked.value;
  }

  async create(caller: Caller, input: PostInput): Promise<PostWithTargets> {
    const { accounts, media } = await this.check(caller, input);
    const targets = accounts.map((account, index) => ({
      ...account,
      format: input.formats[index] ?? 'feed',
    }));
    const post = await this.store.create(
      {
        id: newId('post'),
        partnerId: caller.partnerId,
        workspaceId: input.workspaceId,
        externalRef: input.externalRef,
        caption: input.caption,
        title: input.title,
        reel: input.reel,
        mediaIds: input.mediaIds,
        media,
        scheduleAt: input.scheduleAt,
        status: initialStatus(input, this.now()),
        createdBy: input.createdBy,
        options: input.options,
      },
      targets,
    );
    if (!post) throw errors.validation('media', 'a media item was deleted meanwhile');
    return { ...post, targets: targets.map((target, position) => pendingTarget(post, target, position)) };
  }

  /** PATCH: a published or publishing post is a conflict; the result is checked like a new post. */
  async update(caller: Caller, id: string, patch: PostPatch): Promise<PostWithTargets> {
    const post = await this.get(caller, id);
    if (!EDITABLE.includes(post.status))
      throw errors.conflict(
        `a ${post.status} post cannot be changed; only draft, scheduled, failed or partial posts can`,
      );
    if (patch.accountIds && post.targets.some((t) => t.status === 'published'))
      throw errors.conflict('targets cannot be replaced once one of them is published');
    const ordered = [...post.targets].sort((a, b) => a.position - b.position);
    const next = {
      workspaceId: post.workspaceId,
      caption: patch.caption ?? post.caption,
      mediaIds: patch.mediaIds ?? post.mediaIds,
      accountIds: patch.accountIds ?? ordered.map((t) => t.accountId),
      formats: patch.formats ?? ordered.map((t) => patch.format ?? (t.format as PostFormat)),
      reel: patch.reel === undefined ? (post.reel as ReelView | null) : patch.reel,
    };
    // Published targets are never posted again: only the others must still be reachable.
    const unpublished = ordered.map((t) => t.status !== 'published');
    const checked = patch.accountIds ? next : onlyUnsettled(next, unpublished);
    const { accounts, media } = await this.checks.check(caller, checked);
    const scheduleAt = patch.scheduleAt === undefined ? post.scheduleAt : patch.scheduleAt;
    const changed = await this.store.update(post, {
      caption: next.caption,
      title: patch.title === undefined ? post.title : patch.title || null,
      reel: next.reel,
      mediaIds: next.mediaIds,
      media,
      scheduleAt,
      // A scheduled post without a time becomes a draft; drafts stay drafts until published.
      status: post.status === 'scheduled' && !scheduleAt ? 'draft' : post.status,
      externalRef: patch.externalRef ?? post.externalRef,
      options: patch.options ?? post.options,
      ...(patch.accountIds
        ? { targets: accounts.map((a, index) => ({ ...a, format: next.formats[index] ?? 'feed' })) }
        : { format: patch.format }),
    });
    if (changed === false) throw errors.validation('media', 'a media item was deleted meanwhile');
    return found(changed, 'post');
  }

  /**
   * Publish now: a draft or scheduled post starts; a failed or partial post retries only its
   * targets that did not publish (a published target is never posted again).
   */
  async publish(caller: Caller, id: string): Promise<PostWithTargets> {
    const post = await this.get(caller, id);
    if (post.status === 'publishing') throw errors.conflict('this post is already publishing');
    if (post.status === 'published') throw errors.conflict('this post is already published');
    const retry = post.targets.filter((t) => t.status !== 'published').map((t) => t.accountId);
    await this.checks.assertStillActive(caller, retry);
    // Known edge: a publish whose answer was lost and that lands at the network more than the
    // worker's grace period (UNKNOWN_OUTCOME_GRACE in publish/network-publisher.ts) after it failed the target would be
    // posted again here, since the retry starts from a fresh container.
    const started = await this.store.startPublishing(post);
    if (!started) throw errors.conflict('this post changed meanwhile; read it again');
    return started;
  }
}
