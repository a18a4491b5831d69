import type { Media } from '../generated/prisma/client.ts';
import type { Queryable } from '../posts/rows.ts';

/**
 * A publish job's view of its target: the target's progress, what the post says, and its media in
 * the post's order. Read and marked `publishing` in one statement (see posts/rows.ts for why the
 * publish path uses named statements).
 */
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

/**
 * Claims a target for this attempt: null when it is settled already or the job belongs to an
 * earlier attempt (a redelivered or superseded job), so nothing is ever posted twice. Also counts
 * the account's posts in the daily-limit window, saving the photo network's check a round trip.
 */
const CLAIM_TARGET = {
  name: 'publishing_claim_target',
  text: `
UPDATE post_targets t SET status = 'publishing', updated_at = now()
  FROM posts p
 WHERE t.post_id = $1 AND t.account_id = $2 AND p.id = t.post_id AND p.attempts = $3
   AND t.status NOT IN ('published', 'failed')
RETURNING t.network, t.container_id, t.publish_sent_at, p.caption, p.options, p.media_ids,
  (SELECT coalesce(json_agg(json_build_object('id', m.id, 'mime', m.mime, 'storageKey', m.storage_key)), '[]')
     FROM media m WHERE m.id = ANY(p.media_ids)) AS media,
  (SELECT count(*)::int FROM post_targets u
    WHERE u.account_id = t.account_id AND u.status = 'published' AND u.published_at > $4) AS published_in_window`,
};

export async function claimTarget(
  db: Queryable,
  job: { post_id: string; account_id: string; attempt: number },
  windowStart: Date,
): Promise<ClaimedTarget | null> {
  const { rows } = await db.query<{
    network: string;
    container_id: string | null;
    publish_sent_at: Date | null;
    caption: string;
    options: Record<string, unknown>;
    media_ids: string[];
    media: ClaimedTarget['media'];
    published_in_window: number;
  }>({ ...CLAIM_TARGET, values: [job.post_id, job.account_id, job.attempt, windowStart] });
  const row = rows[0];
  if (!row) return null;
  return {
    postId: job.post_id,
    accountId: job.account_id,
    network: row.network,
    containerId: row.container_id,
    publishSentAt: row.publish_sent_at,
    caption: row.caption,
    options: row.options,
    // In the post's order (a carousel's order); a media row deleted meanwhile is left out.
    media: row.media_ids.flatMap((id) => row.media.filter((m) => m.id === id)),
    publishedInWindow: row.published_in_window,
  };
}

const RECORD_CONTAINER = {
  name: 'publishing_record_container',
  text: 'UPDATE post_targets SET container_id = $3, updated_at = now() WHERE post_id = $1 AND account_id = $2',
};

const RECORD_PUBLISH_SENT = {
  name: 'publishing_record_publish_sent',
  text: 'UPDATE post_targets SET publish_sent_at = $3, updated_at = now() WHERE post_id = $1 AND account_id = $2',
};

/** Progress recorded before the next step, so a worker that dies resumes from it. */
export async function recordContainer(db: Queryable, target: ClaimedTarget, containerId: string) {
  await db.query({ ...RECORD_CONTAINER, values: [target.postId, target.accountId, containerId] });
}

export async function recordPublishSent(db: Queryable, target: ClaimedTarget, sentAt: Date) {
  await db.query({ ...RECORD_PUBLISH_SENT, values: [target.postId, target.accountId, sentAt] });
}
