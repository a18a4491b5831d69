import { outboxInsertSql } from '@svc/bus';
import { selectList } from '@svc/db';
import { CLAIMED_FIELDS, POST_FIELDS, TARGET_FIELDS, TARGET_PREFIX } from './post-rows.ts';

/**
 * Every statement on posts, targets and their outbox rows, named so that each connection parses
 * and plans it once (the publish path runs several per target; see post-rows.ts). Only the post
 * store runs them.
 */

const POST_COLUMNS = selectList(POST_FIELDS);
const TARGET_COLUMNS = selectList(TARGET_FIELDS);

/** A post with its targets, one row per target (one row with null targets when it has none). */
export const SELECT_POST_WITH_TARGETS = {
  name: 'publishing_select_post',
  text: `SELECT ${selectList(POST_FIELDS, { table: 'p' })},
                ${selectList(TARGET_FIELDS, { table: 't', prefix: TARGET_PREFIX })}
           FROM posts p LEFT JOIN post_targets t ON t.post_id = p.id
          WHERE p.id = $1 ORDER BY t.position`,
};

/**
 * A new post, its targets and (when it publishes now) one job per target, in one statement: one
 * round trip, atomic without a transaction block. Its media are locked FOR SHARE meanwhile, so a
 * concurrent media delete waits and then sees the post; a media item deleted before leaves the
 * count short, and nothing is written.
 */
export const CREATE_POST = {
  name: 'publishing_create_post',
  text: `
WITH locked AS (
  SELECT id FROM media WHERE id = ANY($6::text[]) FOR SHARE
), post AS (
  INSERT INTO posts (id, partner_id, workspace_id, external_ref, caption, media_ids, media, schedule_at,
                     status, attempts, unsettled, created_by, options, title, reel, updated_at)
  SELECT $1, $2, $3, $4, $5, $6, $7, $8, $9, $10, CASE WHEN $10 = 1 THEN cardinality($16::text[]) ELSE 0 END,
         $11, $12, $14, $15, now()
   WHERE (SELECT count(*) FROM locked) = $13
  RETURNING ${POST_COLUMNS}
), targets AS (
  INSERT INTO post_targets (post_id, account_id, position, network, username, format, status, updated_at)
  SELECT post.id, t.account_id, t.position, t.network, t.username, t.format, 'pending', now()
    FROM post, unnest($16::text[], $17::int[], $18::text[], $19::text[], $20::text[])
               AS t(account_id, position, network, username, format)
), jobs AS (
  ${outboxInsertSql(21, 'post')}
)
SELECT * FROM post`,
};

export const INSERT_TARGETS = {
  name: 'publishing_insert_targets',
  text: `INSERT INTO post_targets (post_id, account_id, position, network, username, format, status, updated_at)
         SELECT $1, t.account_id, t.position, t.network, t.username, t.format, 'pending', now()
           FROM unnest($2::text[], $3::int[], $4::text[], $5::text[], $6::text[])
                AS t(account_id, position, network, username, format)
         RETURNING ${TARGET_COLUMNS}`,
};

/** Every target not yet published takes this format (a change of the post's format). */
export const SET_TARGET_FORMAT = {
  name: 'publishing_set_target_format',
  text: `UPDATE post_targets SET format = $2, updated_at = now()
          WHERE post_id = $1 AND status <> 'published'
         RETURNING ${TARGET_COLUMNS}`,
};

export const DELETE_TARGETS = {
  name: 'publishing_delete_targets',
  text: 'DELETE FROM post_targets WHERE post_id = $1',
};

/**
 * Holds a post's media against a concurrent delete until the post is written (media delete
 * refuses media of unpublished posts, but only once it can see the post).
 */
export const LOCK_MEDIA = {
  name: 'publishing_lock_media',
  text: 'SELECT id FROM media WHERE id = ANY($1) FOR SHARE',
};

export const UPDATE_POST = {
  name: 'publishing_update_post',
  text: `UPDATE posts SET caption = $2, media_ids = $3, media = $4, schedule_at = $5, status = $6,
                      external_ref = $7, options = $8, title = $9, reel = $10, updated_at = now()
          WHERE id = $1
         RETURNING ${POST_COLUMNS}`,
};

/** Only one caller moves a post to publishing, whatever the concurrency: the status guards it. */
export const START_PUBLISHING = {
  name: 'publishing_start_publishing',
  text: `UPDATE posts SET status = 'publishing', attempts = $3, last_error = NULL, updated_at = now(),
                unsettled = (SELECT count(*) FROM post_targets WHERE post_id = $1 AND status <> 'published')
          WHERE id = $1 AND status = $2
         RETURNING ${POST_COLUMNS}`,
};

export const RESET_UNPUBLISHED_TARGETS = {
  name: 'publishing_reset_unpublished_targets',
  text: `UPDATE post_targets
            SET status = 'pending', error = NULL, container_id = NULL, publish_sent_at = NULL,
                waiting_until = NULL, waiting_since = NULL, updated_at = now()
          WHERE post_id = $1 AND status <> 'published'
         RETURNING ${TARGET_COLUMNS}`,
};

/** Moves the due posts to publishing and answers each with its targets still to publish. */
export const START_DUE = {
  name: 'publishing_start_due_posts',
  text: `
WITH due AS (
  SELECT id FROM posts WHERE status = 'scheduled' AND schedule_at <= $1
   ORDER BY schedule_at LIMIT $2 FOR UPDATE SKIP LOCKED
)
UPDATE posts p SET status = 'publishing', attempts = p.attempts + 1, updated_at = now(),
       unsettled = (SELECT count(*) FROM post_targets t WHERE t.post_id = p.id AND t.status <> 'published')
  FROM due WHERE p.id = due.id
RETURNING p.id, p.attempts,
  ARRAY(SELECT account_id FROM post_targets t WHERE t.post_id = p.id AND t.status <> 'published'
         ORDER BY t.position) AS accounts`,
};

/**
 * Claims targets for their attempts, a batch of jobs in one statement (see TargetSteps): a target
 * settled already or whose job belongs to an earlier attempt (a redelivered or superseded job) is
 * not claimed, so nothing is ever posted twice, nor one deferred to a later time. Also counts each
 * account's posts in the daily-limit window, saving the photo network's check a round trip.
 */
export const CLAIM_TARGETS = {
  name: 'publishing_claim_targets',
  text: `
UPDATE post_targets t SET status = 'publishing', waiting_until = NULL, updated_at = now()
  FROM posts p,
       unnest($1::text[], $2::text[], $3::int[], $4::timestamptz[], $5::timestamptz[])
         AS j(post_id, account_id, attempt, window_start, now)
 WHERE t.post_id = j.post_id AND t.account_id = j.account_id AND p.id = t.post_id AND p.attempts = j.attempt
   AND t.status NOT IN ('published', 'failed') AND (t.waiting_until IS NULL OR t.waiting_until <= j.now)
RETURNING t.post_id AS "postId", t.account_id AS "accountId", ${selectList(CLAIMED_FIELDS)}`,
};

/**
 * Defers a claimed target until `$3` (the network throttles its account or is down): its job is
 * queued again then by RESUME_WAITING. `waiting_since` keeps the first deferral of the attempt.
 */
export const DEFER_TARGET = {
  name: 'publishing_defer_target',
  text: `UPDATE post_targets SET waiting_until = $3, waiting_since = coalesce(waiting_since, $4), updated_at = now()
          WHERE post_id = $1 AND account_id = $2 AND status NOT IN ('published', 'failed')`,
};

/** Takes the deferred targets whose time has come (SKIP LOCKED: replicas share them), with their attempt. */
export const RESUME_WAITING = {
  name: 'publishing_resume_waiting',
  text: `
WITH due AS (
  SELECT post_id, account_id, waiting_until FROM post_targets
   WHERE waiting_until <= $1 AND status NOT IN ('published', 'failed')
   ORDER BY waiting_until LIMIT $2 FOR UPDATE SKIP LOCKED
)
UPDATE post_targets t SET waiting_until = NULL, updated_at = now()
  FROM due, posts p
 WHERE t.post_id = due.post_id AND t.account_id = due.account_id AND p.id = t.post_id
RETURNING t.post_id AS "postId", t.account_id AS "accountId", p.attempts, due.waiting_until AS "waitingUntil"`,
};

/** The containers of a batch of targets, recorded before their status is awaited. */
export const RECORD_CONTAINERS = {
  name: 'publishing_record_containers',
  text: `UPDATE post_targets t SET container_id = v.container_id, updated_at = now()
           FROM unnest($1::text[], $2::text[], $3::text[]) AS v(post_id, account_id, container_id)
          WHERE t.post_id = v.post_id AND t.account_id = v.account_id`,
};

/** When the final publish call of a batch of targets is sent, recorded before it is. */
export const RECORD_PUBLISH_SENT = {
  name: 'publishing_record_publish_sent',
  text: `UPDATE post_targets t SET publish_sent_at = v.sent_at, updated_at = now()
           FROM unnest($1::text[], $2::text[], $3::timestamptz[]) AS v(post_id, account_id, sent_at)
          WHERE t.post_id = v.post_id AND t.account_id = v.account_id`,
};

/**
 * Records a batch of targets' outcomes and counts their posts down, in one statement (atomic
 * without a transaction block), answering each recorded target with its post's targets left
 * (null when the post is no longer publishing). A target settled already is left as it is and
 * counts nothing: a redelivered job cannot count a post down twice. A published outcome clears the
 * error; a failure keeps what the target recorded before.
 */
export const RECORD_OUTCOMES = {
  name: 'publishing_record_outcomes',
  text: `
WITH v AS (
  SELECT * FROM unnest($1::text[], $2::text[], $3::text[], $4::text[], $5::text[], $6::text[],
                       $7::timestamptz[], $8::text[], $9::text[])
    AS v(post_id, account_id, status, error, platform_post_id, permalink, published_at,
         first_comment_id, first_comment_error)
), recorded AS (
  UPDATE post_targets t
     SET status = v.status, error = v.error,
         platform_post_id = coalesce(v.platform_post_id, t.platform_post_id),
         permalink = coalesce(v.permalink, t.permalink),
         published_at = coalesce(v.published_at, t.published_at),
         first_comment_id = coalesce(v.first_comment_id, t.first_comment_id),
         first_comment_error = coalesce(v.first_comment_error, t.first_comment_error),
         waiting_until = NULL, updated_at = now()
    FROM v
   WHERE t.post_id = v.post_id AND t.account_id = v.account_id AND t.status NOT IN ('published', 'failed')
  RETURNING t.post_id, t.account_id
), counted AS (
  SELECT post_id, count(*)::int AS n FROM recorded GROUP BY post_id
), left_over AS (
  UPDATE posts p SET unsettled = p.unsettled - counted.n
    FROM counted
   WHERE p.id = counted.post_id AND p.status = 'publishing'
  RETURNING p.id, p.unsettled
)
SELECT r.post_id AS "postId", r.account_id AS "accountId", l.unsettled
  FROM recorded r LEFT JOIN left_over l ON l.id = r.post_id`,
};

/** Posts with their targets, one row per target, grouped by post. */
export const SELECT_POSTS_WITH_TARGETS = {
  name: 'publishing_select_posts',
  text: `SELECT ${selectList(POST_FIELDS, { table: 'p' })},
                ${selectList(TARGET_FIELDS, { table: 't', prefix: TARGET_PREFIX })}
           FROM posts p LEFT JOIN post_targets t ON t.post_id = p.id
          WHERE p.id = ANY($1) ORDER BY p.id, t.position`,
};

/**
 * A batch of posts' outcomes and their events (`$6`–`$9`, one per post, `$10` the event id of each
 * post), each written only while its post is still publishing; answers the events written.
 */
export const SETTLE_POSTS = {
  name: 'publishing_settle_posts',
  text: `
WITH settled AS (
  UPDATE posts p SET status = v.status, last_error = v.last_error, published_at = v.published_at,
                     updated_at = v.updated_at
    FROM unnest($1::text[], $2::text[], $3::text[], $4::timestamptz[], $5::timestamptz[], $10::text[])
           AS v(id, status, last_error, published_at, updated_at, event_id)
   WHERE p.id = v.id AND p.status = 'publishing'
  RETURNING v.event_id
)
${outboxInsertSql(6)}
 WHERE o.id IN (SELECT event_id FROM settled)
RETURNING id`,
};

export const POST_STATUS = { name: 'publishing_post_status', text: 'SELECT status FROM posts WHERE id = $1' };

export const PUBLISHED_IN_WINDOW = {
  name: 'publishing_published_in_window',
  text: `SELECT published_at AS "publishedAt" FROM post_targets
          WHERE account_id = $1 AND status = 'published' AND published_at > $2
          ORDER BY published_at`,
};

/** The oldest post of the workspace that lists this media and may still be sent. */
export const UNPUBLISHED_POST_WITH_MEDIA = {
  name: 'publishing_unpublished_post_with_media',
  text: `SELECT id, status FROM posts
          WHERE workspace_id = $1 AND $2 = ANY(media_ids) AND status <> 'published'
          ORDER BY created_at LIMIT 1`,
};
