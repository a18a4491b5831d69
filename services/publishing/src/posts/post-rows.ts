import type { Account } from '@svc/contracts';
import type { PostMediaView } from '@svc/contracts/public';
import { type Caller, visibleTo } from '@svc/db';
import type pg from 'pg';
import type { Media, Post, PostTarget, Prisma } from '../generated/prisma/client.ts';

/**
 * Post and target rows as the post store's named statements read them (see post-store.ts). The publish path
 * runs a dozen statements per target, and Prisma's per-query work (its query compiler and
 * interpreter) was most of the service's CPU there; a named statement is parsed and planned once
 * per connection. Rows come back in the migrations' snake_case and are mapped to the same model
 * types Prisma gives the rest of the service.
 */
export type Queryable = pg.Pool | pg.PoolClient;

/** A post with its targets, as the store reads it. */
export type PostWithTargets = Post & { targets: PostTarget[] };

export type Row = Record<string, unknown>;

export function postFromRow(row: Row): Post {
  return {
    id: row.id as string,
    partnerId: row.partner_id as string,
    workspaceId: row.workspace_id as string,
    externalRef: row.external_ref as string | null,
    caption: row.caption as string,
    mediaIds: row.media_ids as string[],
    media: row.media as Prisma.JsonValue,
    scheduleAt: row.schedule_at as Date | null,
    status: row.status as string,
    publishedAt: row.published_at as Date | null,
    attempts: row.attempts as number,
    unsettled: row.unsettled as number,
    lastError: row.last_error as string | null,
    createdBy: row.created_by as string,
    options: row.options as Prisma.JsonValue,
    createdAt: row.created_at as Date,
    updatedAt: row.updated_at as Date,
  };
}

/** A target row; `prefix` when its columns come aliased beside a post's (see readPost). */
export function targetFromRow(row: Row, prefix = ''): PostTarget {
  const col = (name: string) => row[prefix + name];
  return {
    postId: col('post_id') as string,
    accountId: col('account_id') as string,
    position: col('position') as number,
    network: col('network') as string,
    username: col('username') as string,
    status: col('status') as string,
    containerId: col('container_id') as string | null,
    publishSentAt: col('publish_sent_at') as Date | null,
    platformPostId: col('platform_post_id') as string | null,
    permalink: col('permalink') as string | null,
    error: col('error') as string | null,
    publishedAt: col('published_at') as Date | null,
    firstCommentId: col('first_comment_id') as string | null,
    firstCommentError: col('first_comment_error') as string | null,
    updatedAt: col('updated_at') as Date,
  };
}

/**
 * The columns the mappers read. Named, never `*`: a prepared `SELECT *` fails on every open
 * connection once a migration adds a column ("cached plan must not change result type").
 */
export const POST_COLUMNS = `id, partner_id, workspace_id, external_ref, caption, media_ids, media, schedule_at,
  status, published_at, attempts, unsettled, last_error, created_by, options, created_at, updated_at`;
export const TARGET_COLUMNS = `post_id, account_id, position, network, username, status, container_id,
  publish_sent_at, platform_post_id, permalink, error, published_at, first_comment_id,
  first_comment_error, updated_at`;

/** The post of SELECT_POST_WITH_TARGETS's rows, with its targets (none when the left join found none). */
export function postOfRows(rows: Row[]): PostWithTargets | null {
  if (!rows[0]) return null;
  const targets = rows.filter((row) => row.t_post_id !== null).map((row) => targetFromRow(row, 't_'));
  return { ...postFromRow(rows[0]), targets };
}

/** A post as it is created; `attempts` and `unsettled` follow from its status. */
export interface NewPost {
  id: string;
  partnerId: string;
  workspaceId: string;
  externalRef: string | null;
  caption: string;
  mediaIds: string[];
  media: PostMediaView[];
  scheduleAt: Date | null;
  status: 'draft' | 'scheduled' | 'publishing';
  createdBy: string;
  options: Record<string, unknown>;
}

/** What a change of a post writes (targets only when they are replaced). */
export interface PostChange {
  caption: string;
  mediaIds: string[];
  media: PostMediaView[];
  scheduleAt: Date | null;
  status: string;
  externalRef: string | null;
  options: unknown;
  targets?: TargetAccount[];
}

export type TargetAccount = Pick<Account, 'id' | 'network' | 'username'>;

/** A publish job's view of its target: its progress, what the post says, its media in order. */
export interface ClaimedTarget {
  postId: string;
  accountId: string;
  network: string;
  containerId: string | null;
  publishSentAt: Date | null;
  caption: string;
  options: Record<string, unknown>;
  media: Pick<Media, 'id' | 'mime' | 'storageKey'>[];
  /** The account's posts published in the rolling window (the photo network's daily limit). */
  publishedInWindow: number;
}

export type TargetRef = Pick<ClaimedTarget, 'postId' | 'accountId'>;

export interface Published {
  platformPostId: string;
  permalink: string | null;
}

export type TargetOutcome =
  | ({
      status: 'published';
      publishedAt: Date;
      firstCommentId?: string;
      firstCommentError?: string;
    } & Published)
  | { status: 'failed'; error: string };

export interface PostQuery {
  workspaceId: string;
  status: string;
  externalRef: string;
  accountId: string;
  createdAfter: string;
  createdBefore: string;
  page: number;
  limit: number;
}

/** The targets of a post, in the partner's order, as the columns the target inserts unnest. */
export const targetColumns = (postId: string, accounts: TargetAccount[]) => [
  postId,
  accounts.map((a) => a.id),
  accounts.map((_, position) => position),
  accounts.map((a) => a.network),
  accounts.map((a) => a.username),
];

export function claimedTarget(job: { post_id: string; account_id: string }, row: Row): ClaimedTarget {
  const mediaIds = row.media_ids as string[];
  const media = row.media as ClaimedTarget['media'];
  return {
    postId: job.post_id,
    accountId: job.account_id,
    network: row.network as string,
    containerId: row.container_id as string | null,
    publishSentAt: row.publish_sent_at as Date | null,
    caption: row.caption as string,
    options: row.options as Record<string, unknown>,
    // In the post's order (a carousel's order); a media row deleted meanwhile is left out.
    media: mediaIds.flatMap((id) => media.filter((m) => m.id === id)),
    publishedInWindow: row.published_in_window as number,
  };
}

export function postFilter(caller: Caller, query: PostQuery): Prisma.PostWhereInput {
  const created = {
    ...(query.createdAfter ? { gt: new Date(query.createdAfter) } : {}),
    ...(query.createdBefore ? { lt: new Date(query.createdBefore) } : {}),
  };
  return {
    ...visibleTo(caller),
    ...(query.workspaceId ? { workspaceId: query.workspaceId } : {}),
    ...(query.status ? { status: query.status } : {}),
    ...(query.externalRef ? { externalRef: query.externalRef } : {}),
    ...(query.accountId ? { targets: { some: { accountId: query.accountId } } } : {}),
    ...(query.createdAfter || query.createdBefore ? { createdAt: created } : {}),
  };
}
