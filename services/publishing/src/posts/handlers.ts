import { callerOf, type PublishingService, type ServiceImplementation } from '@svc/contracts';
import type { Caller } from '@svc/db';
import { errors } from '@svc/errors';
import type { PublishingContext } from '../context.ts';
import { dryRun } from './dry-run.ts';
import { idempotent } from './idempotency.ts';
import { createPost, getPost, listPosts, publishPost, updatePost } from './posts.ts';
import { publishingLimit } from './publishing-limit.ts';
import { messageOfJson, type PostWithTargets, toPostMessage } from './view.ts';

type PostMethods =
  | 'createPost'
  | 'getPost'
  | 'listPosts'
  | 'updatePost'
  | 'publishPost'
  | 'getPublishingLimit';

/** The longest a caller may wait for an outcome (spec 8: up to 25 s). */
const MAX_WAIT_MS = 25_000;

const dateOrNull = (text: string | undefined, field: string): Date | null => {
  if (!text) return null;
  const date = new Date(text);
  if (Number.isNaN(date.getTime())) throw errors.validation(field, `${field} must be an ISO-8601 timestamp`);
  return date;
};

const optionsOf = (json: string | undefined): Record<string, unknown> => {
  const value: unknown = JSON.parse(json || '{}');
  if (typeof value !== 'object' || value === null || Array.isArray(value))
    throw errors.validation('options', 'options must be an object');
  return value as Record<string, unknown>;
};

export function postHandlers(
  ctx: PublishingContext,
): Pick<ServiceImplementation<typeof PublishingService>, PostMethods> {
  /**
   * The post as it stands once the wait (if any) is over: as its settlement event showed it, else
   * the one this request just wrote when nothing was waited for, else read again (a replay, an
   * outcome that came before the wait began, or a wait that timed out).
   */
  const answer = async (
    caller: Caller,
    result: { postId: string; replayed: boolean },
    waitMs: number,
    written: PostWithTargets | undefined,
  ) => {
    const settled = await ctx.settlements.wait(result.postId, Math.min(waitMs, MAX_WAIT_MS));
    if (settled) return { post: messageOfJson(settled), replayed: result.replayed };
    const post =
      written && !result.replayed && waitMs <= 0 ? written : await getPost(ctx, caller, result.postId);
    return { post: toPostMessage(post), replayed: result.replayed };
  };
  return {
    async createPost(req) {
      const caller = callerOf(req.caller);
      const input = {
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
      if (req.dryRun) return { dryRunJson: JSON.stringify(await dryRun(ctx, caller, input)) };
      let written: PostWithTargets | undefined;
      const create = async () => {
        written = await createPost(ctx, caller, input);
        return written.id;
      };
      const result = await idempotent(ctx, caller.partnerId, req.idempotency, create);
      return answer(caller, result, req.waitMs, written);
    },
    async getPost(req) {
      return { post: toPostMessage(await getPost(ctx, callerOf(req.caller), req.postId)) };
    },
    async listPosts(req) {
      const { posts, total } = await listPosts(ctx, callerOf(req.caller), req);
      return { posts: posts.map(toPostMessage), total };
    },
    async updatePost(req) {
      const post = await updatePost(ctx, callerOf(req.caller), req.postId, {
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
      return { post: toPostMessage(post) };
    },
    async getPublishingLimit(req) {
      return publishingLimit(ctx, callerOf(req.caller), req.accountId);
    },
    async publishPost(req) {
      const caller = callerOf(req.caller);
      let written: PostWithTargets | undefined;
      const publish = async () => {
        written = await publishPost(ctx, caller, req.postId);
        return written.id;
      };
      const result = await idempotent(ctx, caller.partnerId, req.idempotency, publish);
      return answer(caller, result, req.waitMs, written);
    },
  };
}
