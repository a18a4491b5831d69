import type pg from 'pg';
import type { Post, PostTarget, Prisma } from '../generated/prisma/client.ts';
import type { PostWithTargets } from './view.ts';

/**
 * Posts and targets read and written with named prepared statements on the pool. The publish path
 * runs a dozen statements per target, and Prisma's per-query work (its query compiler and
 * interpreter) was most of the service's CPU there; a named statement is parsed and planned once
 * per connection. Rows come back in the migrations' snake_case and are mapped to the same model
 * types Prisma gives the rest of the service.
 */
export type Queryable = pg.Pool | pg.PoolClient;

type Row = Record<string, unknown>;

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

/** The target columns prefixed `t_`, beside a post's in one row. */
const PREFIXED_TARGET_COLUMNS = TARGET_COLUMNS.split(',')
  .map((column) => `t.${column.trim()} AS t_${column.trim()}`)
  .join(', ');

/** A post with its targets, one row per target (one row with null targets when it has none). */
const SELECT_POST = {
  name: 'publishing_select_post',
  text: `SELECT ${POST_COLUMNS.split(',')
    .map((column) => `p.${column.trim()}`)
    .join(', ')}, ${PREFIXED_TARGET_COLUMNS}
           FROM posts p LEFT JOIN post_targets t ON t.post_id = p.id
          WHERE p.id = $1 ORDER BY t.position`,
};

/** A post and its targets by id, in one round trip (no scope check: callers that need one check the row). */
export async function readPost(db: Queryable, id: string): Promise<PostWithTargets | null> {
  const { rows } = await db.query<Row>({ ...SELECT_POST, values: [id] });
  if (!rows[0]) return null;
  const targets = rows.filter((row) => row.t_post_id !== null).map((row) => targetFromRow(row, 't_'));
  return { ...postFromRow(rows[0]), targets };
}
