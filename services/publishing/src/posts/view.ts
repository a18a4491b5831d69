import type { Post as PostMessage } from '@svc/contracts';
import type { Post, PostTarget } from '../generated/prisma/client.ts';

export type PostWithTargets = Post & { targets: PostTarget[] };

export interface MediaSummary {
  id: string;
  kind: string;
  mime: string;
  width: number;
  height: number;
}

const iso = (date: Date | null) => date?.toISOString() ?? null;
const mediaOf = (post: Post) => post.media as unknown as MediaSummary[];

/** Targets in the order the partner listed them. */
const orderedTargets = (post: PostWithTargets): PostTarget[] =>
  [...post.targets].sort((a, b) => a.position - b.position);

/**
 * The post exactly as `GET /v1/posts/:id` shows it (spec 2.3, 2.4): what `data.post` of a post
 * event carries. The gateway's view of the gRPC message must give the same object (tested).
 */
export function postJson(post: PostWithTargets) {
  return {
    id: post.id,
    workspace: post.workspaceId,
    external_ref: post.externalRef,
    caption: post.caption,
    media: mediaOf(post),
    targets: orderedTargets(post).map((t) => ({
      account: t.accountId,
      network: t.network,
      username: t.username,
      status: t.status,
      platform_post_id: t.platformPostId,
      permalink: t.permalink,
      error: t.error,
      published_at: iso(t.publishedAt),
      first_comment_error: t.firstCommentError,
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

type PostInit = Omit<PostMessage, '$typeName' | '$unknown' | 'media' | 'targets'> & {
  media: Omit<PostMessage['media'][number], '$typeName' | '$unknown'>[];
  targets: Omit<PostMessage['targets'][number], '$typeName' | '$unknown'>[];
};

export type PostJson = ReturnType<typeof postJson>;

export function toPostMessage(post: PostWithTargets): PostInit {
  return messageOfJson(postJson(post));
}

/** The gRPC message of a post's JSON, e.g. the `data.post` of a post event. */
export function messageOfJson(json: PostJson): PostInit {
  return {
    id: json.id,
    workspaceId: json.workspace,
    externalRef: json.external_ref ?? '',
    caption: json.caption,
    media: json.media.map((m) => ({ ...m, workspaceId: json.workspace, size: 0n, createdAt: '' })),
    targets: json.targets.map((t) => ({
      accountId: t.account,
      network: t.network,
      username: t.username,
      status: t.status,
      platformPostId: t.platform_post_id ?? '',
      permalink: t.permalink ?? '',
      error: t.error ?? undefined,
      publishedAt: t.published_at ?? '',
      firstCommentError: t.first_comment_error ?? undefined,
    })),
    scheduleAt: json.schedule_at ?? '',
    status: json.status,
    publishedAt: json.published_at ?? '',
    attempts: json.attempts,
    lastError: json.last_error ?? undefined,
    createdBy: json.created_by,
    createdAt: json.created,
    updatedAt: json.updated,
    optionsJson: JSON.stringify(json.options),
  };
}
