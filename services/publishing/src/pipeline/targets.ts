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
}

/**
 * Claims a target for this attempt: null when it is settled already or the job belongs to an
 * earlier attempt (a redelivered or superseded job), so nothing is ever posted twice.
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
     FROM media m WHERE m.id = ANY(p.media_ids)) AS media`,
};

export async function claimTarget(
  db: Queryable,
  job: { post_id: string; account_id: string; attempt: number },
): Promise<ClaimedTarget | null> {
  const { rows } = await db.query<{
    network: string;
    container_id: string | null;
    publish_sent_at: Date | null;
    caption: string;
    options: Record<string, unknown>;
    media_ids: string[];
    media: ClaimedTarget['media'];
  }>({ ...CLAIM_TARGET, values: [job.post_id, job.account_id, job.attempt] });
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
