import type { Account } from '@svc/contracts';
import { type Caller, found, pageWindow, transaction, visibleTo } from '@svc/db';
import { errors } from '@svc/errors';
import { newId } from '@svc/ids';
import type pg from 'pg';
import type { PublishingContext } from '../context.ts';
import { outboxColumns, publishJobRow, writeOutbox } from '../events.ts';
import type { Post, PostTarget, Prisma } from '../generated/prisma/client.ts';
import { assertActive, assertWorkspace, checkPost, visibleAccounts } from './checks.ts';
import { POST_COLUMNS, postFromRow, readPost } from './rows.ts';
import type { PostWithTargets } from './view.ts';

/**
 * Posts: create (draft, scheduled or publishing at once), read, list, patch and publish. Every
 * check runs before anything is sent; publishing writes one job per target into the outbox in
 * the same transaction, so a crash never loses a post nor queues it twice.
 */
export interface PostInput {
  workspaceId: string;
  caption: string;
  mediaIds: string[];
  accountIds: string[];
  scheduleAt: Date | null;
  externalRef: string | null;
  options: Record<string, unknown>;
  draft: boolean;
  createdBy: string;
}

const withTargets = { targets: true } as const;

/** A post of the caller's scope; another partner's or workspace's is not_found. */
export async function getPost(ctx: PublishingContext, caller: Caller, id: string): Promise<PostWithTargets> {
  const post = await readPost(ctx.pool, id);
  const visible =
    post?.partnerId === caller.partnerId && (!caller.workspaceId || post.workspaceId === caller.workspaceId);
  return found(visible ? post : null, 'post');
}

export async function createPost(
  ctx: PublishingContext,
  caller: Caller,
  input: PostInput,
): Promise<PostWithTargets> {
  // Both at once; a missing workspace is the answer before anything checkPost says.
  const [workspace, checked] = await Promise.allSettled([
    assertWorkspace(ctx, caller, input.workspaceId),
    checkPost(ctx, caller, input),
  ]);
  if (workspace.status === 'rejected') throw workspace.reason;
  if (checked.status === 'rejected') throw checked.reason;
  const { accounts, media } = checked.value;
  const now = ctx.now();
  const status = input.draft
    ? 'draft'
    : input.scheduleAt && input.scheduleAt > now
      ? 'scheduled'
      : 'publishing';
  const id = newId('post');
  const jobs = status === 'publishing' ? accounts.map((a) => publishJobRow(id, a.id, 1)) : [];
  const { rows } = await ctx.pool.query({
    ...CREATE_POST,
    values: [
      id,
      caller.partnerId,
      input.workspaceId,
      input.externalRef,
      input.caption,
      input.mediaIds,
      JSON.stringify(media),
      input.scheduleAt,
      status,
      status === 'publishing' ? 1 : 0,
      input.createdBy,
      JSON.stringify(input.options),
      new Set(input.mediaIds).size,
      ...targetColumns(id, accounts).slice(1),
      ...outboxColumns(jobs),
    ],
  });
  if (!rows[0]) throw errors.validation('media', 'a media item was deleted meanwhile');
  void ctx.relay.publishCommitted(jobs);
  const post = postFromRow(rows[0]);
  return { ...post, targets: accounts.map((account, position) => newTarget(post, account, position)) };
}

/**
 * A new post, its targets and (when it publishes now) one job per target, in one statement: one
 * round trip, atomic without a transaction block. Its media are locked FOR SHARE meanwhile, so a
 * concurrent media delete waits and then sees the post; a media item deleted before leaves the
 * count short, and nothing is written.
 */
const CREATE_POST = {
  name: 'publishing_create_post',
  text: `
WITH locked AS (
  SELECT id FROM media WHERE id = ANY($6::text[]) FOR SHARE
), post AS (
  INSERT INTO posts (id, partner_id, workspace_id, external_ref, caption, media_ids, media, schedule_at,
                     status, attempts, unsettled, created_by, options, updated_at)
  SELECT $1, $2, $3, $4, $5, $6, $7, $8, $9, $10, CASE WHEN $10 = 1 THEN cardinality($14::text[]) ELSE 0 END,
         $11, $12, now()
   WHERE (SELECT count(*) FROM locked) = $13
  RETURNING ${POST_COLUMNS}
), targets AS (
  INSERT INTO post_targets (post_id, account_id, position, network, username, status, updated_at)
  SELECT post.id, t.account_id, t.position, t.network, t.username, 'pending', now()
    FROM post, unnest($14::text[], $15::int[], $16::text[], $17::text[]) AS t(account_id, position, network, username)
), jobs AS (
  INSERT INTO outbox (id, subject, payload, request_id)
  SELECT o.* FROM post, unnest($18::text[], $19::text[], $20::jsonb[], $21::text[]) AS o
)
SELECT * FROM post`,
};

/** A target as CREATE_POST writes it: pending, nothing sent yet. */
const newTarget = (post: Post, account: Account, position: number): PostTarget => ({
  postId: post.id,
  accountId: account.id,
  position,
  network: account.network,
  username: account.username,
  status: 'pending',
  containerId: null,
  publishSentAt: null,
  platformPostId: null,
  permalink: null,
  error: null,
  publishedAt: null,
  firstCommentId: null,
  firstCommentError: null,
  updatedAt: post.updatedAt,
});

/** The targets of a post, in the partner's order, as the columns INSERT_TARGETS unnests. */
const targetColumns = (postId: string, accounts: Account[]) => [
  postId,
  accounts.map((a) => a.id),
  accounts.map((_, position) => position),
  accounts.map((a) => a.network),
  accounts.map((a) => a.username),
];

const INSERT_TARGETS = {
  name: 'publishing_insert_targets',
  text: `INSERT INTO post_targets (post_id, account_id, position, network, username, status, updated_at)
         SELECT $1, t.account_id, t.position, t.network, t.username, 'pending', now()
           FROM unnest($2::text[], $3::int[], $4::text[], $5::text[]) AS t(account_id, position, network, username)`,
};

/**
 * Holds the post's media against a concurrent delete until the post is written (media delete
 * refuses media of unpublished posts, but only once it can see the post).
 */
async function lockMedia(tx: pg.PoolClient, mediaIds: string[]): Promise<void> {
  if (mediaIds.length === 0) return;
  const { rows } = await tx.query({ ...LOCK_MEDIA, values: [mediaIds] });
  if (rows.length !== new Set(mediaIds).size)
    throw errors.validation('media', 'a media item was deleted meanwhile');
}

const LOCK_MEDIA = {
  name: 'publishing_lock_media',
  text: 'SELECT id FROM media WHERE id = ANY($1) FOR SHARE',
};

export async function listPosts(
  ctx: PublishingContext,
  caller: Caller,
  query: {
    workspaceId: string;
    status: string;
    externalRef: string;
    accountId: string;
    createdAfter: string;
    createdBefore: string;
    page: number;
    limit: number;
  },
): Promise<{ posts: PostWithTargets[]; total: number }> {
  const where: Prisma.PostWhereInput = {
    ...visibleTo(caller),
    ...(query.workspaceId ? { workspaceId: query.workspaceId } : {}),
    ...(query.status ? { status: query.status } : {}),
    ...(query.externalRef ? { externalRef: query.externalRef } : {}),
    ...(query.accountId ? { targets: { some: { accountId: query.accountId } } } : {}),
    ...(query.createdAfter || query.createdBefore
      ? {
          createdAt: {
            ...(query.createdAfter ? { gt: new Date(query.createdAfter) } : {}),
            ...(query.createdBefore ? { lt: new Date(query.createdBefore) } : {}),
          },
        }
      : {}),
  };
  const [posts, total] = await Promise.all([
    ctx.db.post.findMany({
      where,
      include: withTargets,
      orderBy: { id: 'asc' },
      ...pageWindow(query.page, query.limit),
    }),
    ctx.db.post.count({ where }),
  ]);
  return { posts, total };
}

export interface PostPatch {
  caption?: string | undefined;
  mediaIds?: string[] | undefined;
  accountIds?: string[] | undefined;
  /** undefined: unchanged; null: cleared. */
  scheduleAt?: Date | null | undefined;
  externalRef?: string | undefined;
  options?: Record<string, unknown> | undefined;
}

const EDITABLE = ['draft', 'scheduled', 'failed', 'partial'];

/** PATCH: a published or publishing post is a conflict; the result is checked like a new post. */
export async function updatePost(
  ctx: PublishingContext,
  caller: Caller,
  id: string,
  patch: PostPatch,
): Promise<PostWithTargets> {
  const post = await getPost(ctx, caller, id);
  if (!EDITABLE.includes(post.status))
    throw errors.conflict(
      `a ${post.status} post cannot be changed; only draft, scheduled, failed or partial posts can`,
    );
  if (patch.accountIds && post.targets.some((t) => t.status === 'published'))
    throw errors.conflict('targets cannot be replaced once one of them is published');
  const next = {
    workspaceId: post.workspaceId,
    caption: patch.caption ?? post.caption,
    mediaIds: patch.mediaIds ?? post.mediaIds,
    accountIds:
      patch.accountIds ?? [...post.targets].sort((a, b) => a.position - b.position).map((t) => t.accountId),
  };
  const unsettled = post.targets.filter((t) => t.status !== 'published').map((t) => t.accountId);
  const { accounts, media } = await checkPost(ctx, caller, {
    ...next,
    // Published targets are never posted again: only the others must still be reachable.
    accountIds: patch.accountIds ?? next.accountIds.filter((a) => unsettled.includes(a)),
  });
  const scheduleAt = patch.scheduleAt === undefined ? post.scheduleAt : patch.scheduleAt;
  // A scheduled post without a time becomes a draft; drafts stay drafts until published.
  const status = post.status === 'scheduled' && !scheduleAt ? 'draft' : post.status;
  return transaction(ctx.pool, async (tx) => {
    await lockMedia(tx, next.mediaIds);
    if (patch.accountIds) {
      await tx.query({ ...DELETE_TARGETS, values: [id] });
      await tx.query({ ...INSERT_TARGETS, values: targetColumns(id, accounts) });
    }
    await tx.query({
      ...UPDATE_POST,
      values: [
        id,
        next.caption,
        next.mediaIds,
        JSON.stringify(media),
        scheduleAt,
        status,
        patch.externalRef ?? post.externalRef,
        JSON.stringify(patch.options ?? post.options),
      ],
    });
    return found(await readPost(tx, id), 'post');
  });
}

const DELETE_TARGETS = {
  name: 'publishing_delete_targets',
  text: 'DELETE FROM post_targets WHERE post_id = $1',
};

const UPDATE_POST = {
  name: 'publishing_update_post',
  text: `UPDATE posts SET caption = $2, media_ids = $3, media = $4, schedule_at = $5, status = $6,
                      external_ref = $7, options = $8, updated_at = now()
          WHERE id = $1`,
};

/**
 * Publish now: a draft or scheduled post starts; a failed or partial post retries only its
 * targets that did not publish (a published target is never posted again).
 */
export async function publishPost(
  ctx: PublishingContext,
  caller: Caller,
  id: string,
): Promise<PostWithTargets> {
  const post = await getPost(ctx, caller, id);
  if (post.status === 'publishing') throw errors.conflict('this post is already publishing');
  if (post.status === 'published') throw errors.conflict('this post is already published');
  const retry = post.targets.filter((t) => t.status !== 'published');
  const accounts = await visibleAccounts(
    ctx,
    caller,
    retry.map((t) => t.accountId),
  );
  for (const account of accounts) if (account) assertActive(account);
  const attempt = post.attempts + 1;
  const claimed = await transaction(ctx.pool, async (tx) => {
    // Only one caller moves the post to publishing, whatever the concurrency.
    const moved = await tx.query({ ...START_PUBLISHING, values: [id, post.status, attempt] });
    if (moved.rowCount === 0) return null;
    // Known edge: a publish whose answer was lost and that lands at the network more than the
    // worker's grace period (pipeline/unknown-outcome.ts) after it failed the target would be
    // posted again here, since the retry starts from a fresh container.
    await tx.query({ ...RESET_UNPUBLISHED_TARGETS, values: [id] });
    return writeOutbox(tx, { jobs: retry.map((t) => publishJobRow(id, t.accountId, attempt)) });
  });
  if (!claimed) throw errors.conflict('this post changed meanwhile; read it again');
  void ctx.relay.publishCommitted(claimed);
  return getPost(ctx, caller, id);
}

const START_PUBLISHING = {
  name: 'publishing_start_publishing',
  text: `UPDATE posts SET status = 'publishing', attempts = $3, last_error = NULL, updated_at = now(),
                unsettled = (SELECT count(*) FROM post_targets WHERE post_id = $1 AND status <> 'published')
          WHERE id = $1 AND status = $2`,
};

const RESET_UNPUBLISHED_TARGETS = {
  name: 'publishing_reset_unpublished_targets',
  text: `UPDATE post_targets
            SET status = 'pending', error = NULL, container_id = NULL, publish_sent_at = NULL, updated_at = now()
          WHERE post_id = $1 AND status <> 'published'`,
};
