import type { Account } from '@svc/contracts';
import type { PostFormat, PostMediaView, ReelView } from '@svc/contracts/public';
import { type Caller, type Fields, prefixedFields, visibleTo } from '@svc/db';
import type pg from 'pg';
import type { Media, Post, PostTarget, Prisma } from '../generated/prisma/client.ts';

/**
 * Post and target rows as the post store's named statements read them (see post-store.ts). The publish path
 * runs a dozen statements per target, and Prisma's per-query work (its query compiler and
 * interpreter) was most of the service's CPU there; a named statement is parsed and planned once
 * per connection. Each statement returns its columns under the Prisma model's field names
 * (`selectList`), so rows are the model types the rest of the service uses.
 */
export type Queryable = pg.Pool | pg.PoolClient;

/** A post with its targets, as the store reads it. */
export type PostWithTargets = Post & { targets: PostTarget[] };

/**
 * The fields the statements return, each named, never `*`: a prepared `SELECT *` fails on every
 * open connection once a migration adds a column ("cached plan must not change result type").
 */
export const POST_FIELDS: Fields<Post> = {
  id: true,
  partnerId: true,
  workspaceId: true,
  externalRef: true,
  caption: true,
  title: true,
  reel: true,
  mediaIds: true,
  media: true,
  scheduleAt: true,
  status: true,
  publishedAt: true,
  attempts: true,
  unsettled: true,
  lastError: true,
  createdBy: true,
  options: true,
  createdAt: true,
  updatedAt: true,
};
export const TARGET_FIELDS: Fields<PostTarget> = {
  postId: true,
  accountId: true,
  position: true,
  network: true,
  username: true,
  format: true,
  status: true,
  containerId: true,
  publishSentAt: true,
  platformPostId: true,
  permalink: true,
  error: true,
  publishedAt: true,
  firstCommentId: true,
  firstCommentError: true,
  waitingUntil: true,
  waitingSince: true,
  updatedAt: true,
};

/** The prefix of a target's fields beside its post's in one row (SELECT_POST_WITH_TARGETS). */
export const TARGET_PREFIX = 't_';

/** The post of SELECT_POST_WITH_TARGETS's rows, with its targets (none when the left join found none). */
export function postOfRows(rows: Record<string, unknown>[]): PostWithTargets | null {
  if (!rows[0]) return null;
  const post = prefixedFields(rows[0], POST_FIELDS, '');
  const targets = rows
    .filter((row) => row[`${TARGET_PREFIX}postId`] !== null)
    .map((row) => prefixedFields(row, TARGET_FIELDS, TARGET_PREFIX));
  return { ...post, targets };
}

/** A post as it is created; `attempts` and `unsettled` follow from its status. */
export interface NewPost {
  id: string;
  partnerId: string;
  workspaceId: string;
  externalRef: string | null;
  caption: string;
  title: string | null;
  reel: ReelView | null;
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
  title: string | null;
  reel: ReelView | null;
  mediaIds: string[];
  media: PostMediaView[];
  scheduleAt: Date | null;
  status: string;
  externalRef: string | null;
  options: unknown;
  targets?: NewTarget[];
  /** Without new targets: the format every target not yet published takes. */
  format?: PostFormat;
}

type TargetAccount = Pick<Account, 'id' | 'network' | 'username'>;
/** A target of a new post or of replaced targets: its account and what it is published as. */
export type NewTarget = TargetAccount & { format: PostFormat };

/** A media item as publishing sends it: its signed URL is made from these. */
type SentMedia = Pick<Media, 'id' | 'mime' | 'storageKey'>;

/** A publish job's view of its target: its progress, what the post says, its media in order. */
export interface ClaimedTarget {
  postId: string;
  accountId: string;
  network: string;
  format: PostFormat;
  containerId: string | null;
  publishSentAt: Date | null;
  caption: string;
  title: string | null;
  reel: ReelView | null;
  options: Record<string, unknown>;
  media: SentMedia[];
  /** The image a Reel's settings name as its cover, when they do and it still exists. */
  cover: SentMedia | null;
  /** The account's posts published in the rolling window (the photo network's daily limit). */
  publishedInWindow: number;
  /** Since when this attempt has waited for the network (throttled or down), if it has. */
  waitingSince: Date | null;
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
export const targetColumns = (postId: string, targets: NewTarget[]) => [
  postId,
  targets.map((a) => a.id),
  targets.map((_, position) => position),
  targets.map((a) => a.network),
  targets.map((a) => a.username),
  targets.map((a) => a.format),
];

/** What CLAIM_TARGET returns of a target and its post. */
export type ClaimedRow = Omit<ClaimedTarget, 'postId' | 'accountId'> & { mediaIds: string[] };

export const CLAIMED_FIELDS: Fields<ClaimedRow> = {
  network: 't.network',
  format: 't.format',
  containerId: 't.container_id',
  publishSentAt: 't.publish_sent_at',
  caption: 'p.caption',
  title: 'p.title',
  reel: 'p.reel',
  options: 'p.options',
  mediaIds: 'p.media_ids',
  media: `(SELECT coalesce(json_agg(json_build_object('id', m.id, 'mime', m.mime, 'storageKey', m.storage_key)), '[]')
     FROM media m WHERE m.id = ANY(p.media_ids))`,
  cover: `(SELECT json_build_object('id', m.id, 'mime', m.mime, 'storageKey', m.storage_key)
     FROM media m WHERE m.id = p.reel->'cover'->>'media')`,
  // Counted only where the daily limit is checked (see dailyLimitRefusal in publish-job.ts).
  publishedInWindow: `CASE WHEN t.network = 'photo_network' AND t.container_id IS NULL
    THEN (SELECT count(*)::int FROM post_targets u
           WHERE u.account_id = t.account_id AND u.status = 'published' AND u.published_at > j.window_start)
    ELSE 0 END`,
  waitingSince: 't.waiting_since',
};

export function claimedTarget(job: { post_id: string; account_id: string }, row: ClaimedRow): ClaimedTarget {
  const { mediaIds, media, ...target } = row;
  return {
    ...target,
    postId: job.post_id,
    accountId: job.account_id,
    // In the post's order (a carousel's order); a media row deleted meanwhile is left out.
    media: mediaIds.flatMap((id) => media.filter((m) => m.id === id)),
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
