import {
  callerOf,
  type IdempotencyClaim,
  type PublishingService,
  type ServiceImplementation,
} from '@svc/contracts';
import type { Caller } from '@svc/db';
import type { AccountsDirectory } from '@svc/directory';
import type { Db } from '../db.ts';
import { dryRun } from './dry-run.ts';
import { idempotent } from './idempotency.ts';
import { reelOf, targetFormatsOf } from './post-formats.ts';
import { dateOrNull, optionsOf, type PostInput, patchOf } from './post-input.ts';
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

const postJson = (post: PostWithTargets) => JSON.stringify(viewOfPost(post));

/**
 * A write (create or publish) under the request's Idempotency-Key, answered with the post as it
 * stands once the wait (if any) is over: as its settlement event showed it, else the one this
 * request just wrote when nothing was waited for, else read again (a replay, an outcome that came
 * before the wait began, or a wait that timed out).
 */
async function writeAndAnswer(
  deps: PostHandlerDeps,
  caller: Caller,
  req: { idempotency?: IdempotencyClaim | undefined; waitMs: number },
  write: () => Promise<PostWithTargets>,
) {
  let written: PostWithTargets | undefined;
  const run = async () => {
    written = await write();
    return written.id;
  };
  const { postId, replayed } = await idempotent(deps, caller.partnerId, req.idempotency, run);
  const settled = await deps.settlements.wait(postId, Math.min(req.waitMs, MAX_WAIT_MS));
  if (settled) return { postJson: JSON.stringify(settled), replayed };
  const current = written && !replayed && req.waitMs <= 0 ? written : await deps.posts.get(caller, postId);
  return { postJson: postJson(current), replayed };
}

export function postHandlers(
  deps: PostHandlerDeps,
): Pick<ServiceImplementation<typeof PublishingService>, PostMethods> {
  const { posts } = deps;
  return {
    async createPost(req) {
      const caller = callerOf(req.caller);
      const input: PostInput = {
        workspaceId: req.workspaceId,
        caption: req.caption,
        mediaIds: req.mediaIds,
        accountIds: req.accountIds,
        formats: targetFormatsOf(req.format, req.targetFormats, req.accountIds.length),
        reel: reelOf(req.reelJson),
        title: req.title || null,
        scheduleAt: dateOrNull(req.scheduleAt, 'schedule_at'),
        externalRef: req.externalRef || null,
        options: optionsOf(req.optionsJson),
        draft: req.draft,
        createdBy: req.createdBy || 'api',
      };
      if (req.dryRun) return { dryRunJson: JSON.stringify(await dryRun(posts, caller, input, deps.now())) };
      return writeAndAnswer(deps, caller, req, () => posts.create(caller, input));
    },
    async getPost(req) {
      return { postJson: postJson(await posts.get(callerOf(req.caller), req.postId)) };
    },
    async listPosts(req) {
      const { posts: found, total } = await posts.list(callerOf(req.caller), req);
      return { postsJson: found.map(postJson), total };
    },
    async updatePost(req) {
      const post = await posts.update(callerOf(req.caller), req.postId, patchOf(req));
      return { postJson: postJson(post) };
    },
    async getPublishingLimit(req) {
      return { limitJson: JSON.stringify(await publishingLimit(deps, callerOf(req.caller), req.accountId)) };
    },
    async publishPost(req) {
      const caller = callerOf(req.caller);
      return writeAndAnswer(deps, caller, req, () => posts.publish(caller, req.postId));
    },
  };
}
