import type { PostFormat, PostMediaView, PostView, ReelView } from '@svc/contracts/public';
import type { Post, PostTarget } from '../generated/prisma/client.ts';
import type { PostWithTargets } from './post-rows.ts';

const iso = (date: Date | null) => date?.toISOString() ?? null;

/** Targets in the order the partner listed them. */
const orderedTargets = (post: PostWithTargets): PostTarget[] =>
  [...post.targets].sort((a, b) => a.position - b.position);

/**
 * The post as partners see it (`PostView`, spec 2.3, 2.4): what `GET /v1/posts/:id` answers and
 * what `data.post` of a post event carries. The only place a post row becomes its public shape.
 */
export function viewOfPost(post: PostWithTargets): PostView {
  return {
    id: post.id,
    workspace: post.workspaceId,
    external_ref: post.externalRef,
    caption: post.caption,
    title: post.title,
    reel: post.reel as ReelView | null,
    media: post.media as unknown as PostMediaView[],
    targets: orderedTargets(post).map((t) => ({
      account: t.accountId,
      network: t.network as PostView['targets'][number]['network'],
      username: t.username,
      format: t.format as PostFormat,
      status: t.status,
      platform_post_id: t.platformPostId,
      permalink: t.permalink,
      error: t.error,
      published_at: iso(t.publishedAt),
      first_comment_error: t.firstCommentError,
      waiting_until: iso(t.waitingUntil),
    })),
    schedule_at: iso(post.scheduleAt),
    status: post.status,
    published_at: iso(post.publishedAt),
    attempts: post.attempts,
    last_error: post.lastError,
    created_by: post.createdBy,
    created: post.createdAt.toISOString(),
    updated: post.updatedAt.toISOString(),
    options: post.options as Record<string, unknown>,
  };
}

/** A target as the post store writes it for a new post: pending, nothing sent yet. */
export function pendingTarget(
  post: Post,
  target: { id: string; network: string; username: string; format: string },
  position: number,
): PostTarget {
  return {
    postId: post.id,
    accountId: target.id,
    position,
    network: target.network,
    username: target.username,
    format: target.format,
    status: 'pending',
    containerId: null,
    publishSentAt: null,
    platformPostId: null,
    permalink: null,
    error: null,
    publishedAt: null,
    firstCommentId: null,
    firstCommentError: null,
    waitingUntil: null,
    waitingSince: null,
    updatedAt: post.updatedAt,
  };
}
