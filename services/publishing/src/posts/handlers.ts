import type { Caller as CallerMessage, PublishingService, ServiceImplementation } from '@svc/contracts';
import type { Caller } from '@svc/db';
import { errors } from '@svc/errors';
import type { AccountsDirectory } from '../accounts-directory.ts';
import type { Db } from '../db.ts';
import { dryRun } from './dry-run.ts';
import { idempotent } from './idempotency.ts';
import { dateOrNull, optionsOf, type PostInput } from './post-input.ts';
import type { PostWithTargets } from './post-rows.ts';
import type { PostStore } from './post-store.ts';
import { viewOfPost } from './post-view.ts';
import type { Posts } from './posts.ts';
import { publishingLimit } from './publishing-limit.ts';
import type { SettlementWatch } from './settlement-watch.ts';

type PostMethods =
  | 'createPost'
  | 'getPost'
  | 'listPosts'
  | 'updatePost'
  | 'publishPost'
  | 'getPublishingLimit';

/** The longest a caller may wait for an outcome (spec 8: up to 25 s). */
const MAX_WAIT_MS = 25_000;

export interface PostHandlerDeps {
  posts: Posts;
  store: PostStore;
  accounts: AccountsDirectory;
  settlements: SettlementWatch;
  db: Db;
  now: () => Date;
}

function callerOf(message: CallerMessage | undefined): Caller {
  if (!message?.partnerId) throw errors.unauthorized('no caller');
  return { partnerId: message.partnerId, workspaceId: message.workspaceId };
}

const postJson = (post: PostWithTargets) => JSON.stringify(viewOfPost(post));

export function postHandlers(
  deps: PostHandlerDeps,
): Pick<ServiceImplementation<typeof PublishingService>, PostMethods> {
  const { posts } = deps;
  /**
   * The post as it stands once the wait (if any) is over: as its settlement event showed it, else
   * the one this request just wrote when nothing was waited for, else read again (a replay, an
   * outcome that came before the wait began, or a wait that timed out).
   */
  const answer = async (
    caller: Caller,
    result: { postId: string; replayed: boolean },
    waitMs: number,
    written?: PostWithTargets,
  ) => {
    const settled = await deps.settlements.wait(result.postId, Math.min(waitMs, MAX_WAIT_MS));
    if (settled) return { postJson: JSON.stringify(settled), replayed: result.replayed };
    const current =
      written && !result.replayed && waitMs <= 0 ? written : await posts.get(caller, result.postId);
    return { postJson: postJson(current), replayed: result.replayed };
  };
  /** Runs a write under the request's Idempotency-Key, keeping the post it wrote. */
  const once = async (
    caller: Caller,
    req: { idempotency?: { key: string; requestHash: string } | undefined },
    write: () => Promise<PostWithTargets>,
  ) => {
    let written: PostWithTargets | undefined;
    const run = async () => {
      written = await write();
      return written.id;
    };
    const result = await idempotent(deps, caller.partnerId, req.idempotency, run);
    return { result, written };
  };
  return {
    async createPost(req) {
      const caller = callerOf(req.caller);
      const input: PostInput = {
        workspaceId: req.workspaceId,
        caption: req.caption,
        mediaIds: req.mediaIds,
        accountIds: req.accountIds,
        scheduleAt: dateOrNull(req.scheduleAt, 'schedule_at'),
        externalRef: req.externalRef || null,
        options: optionsOf(req.optionsJson),
        draft: req.draft,
        createdBy: req.createdBy || 'api',
      };
      if (req.dryRun) return { dryRunJson: JSON.stringify(await dryRun(posts, caller, input, deps.now())) };
      const { result, written } = await once(caller, req, () => posts.create(caller, input));
      return answer(caller, result, req.waitMs, written);
    },
    async getPost(req) {
      return { postJson: postJson(await posts.get(callerOf(req.caller), req.postId)) };
    },
    async listPosts(req) {
      const { posts: found, total } = await posts.list(callerOf(req.caller), req);
      return { postsJson: found.map(postJson), total };
    },
    async updatePost(req) {
      const post = await posts.update(callerOf(req.caller), req.postId, {
        caption: req.caption,
        mediaIds: req.replaceMedia ? req.mediaIds : undefined,
        accountIds: req.replaceTargets ? req.accountIds : undefined,
        scheduleAt: req.clearSchedule
          ? null
          : req.scheduleAt
            ? dateOrNull(req.scheduleAt, 'schedule_at')
            : undefined,
        externalRef: req.externalRef,
        options: req.optionsJson === undefined ? undefined : optionsOf(req.optionsJson),
      });
      return { postJson: postJson(post) };
    },
    async getPublishingLimit(req) {
      return { limitJson: JSON.stringify(await publishingLimit(deps, callerOf(req.caller), req.accountId)) };
    },
    async publishPost(req) {
      const caller = callerOf(req.caller);
      const { result, written } = await once(caller, req, () => posts.publish(caller, req.postId));
      return answer(caller, result, req.waitMs, written);
    },
  };
}
