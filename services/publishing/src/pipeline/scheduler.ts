import { transaction } from '@svc/db';
import type { PublishingContext } from '../context.ts';
import { publishJobRow, writeOutbox } from '../events.ts';

/**
 * Starts scheduled posts whose time has come: claimed with SKIP LOCKED, so several replicas share
 * the work and a post starts once. Targets whose account was disconnected meanwhile fail in the
 * worker (spec 3, rule 2); the others publish.
 */
export async function startDuePosts(ctx: PublishingContext, batchSize = 50): Promise<number> {
  const { started, rows } = await transaction(ctx.pool, async (tx) => {
    const due = await tx.query<{ id: string; attempts: number; accounts: string[] }>({
      ...START_DUE,
      values: [ctx.now(), batchSize],
    });
    const jobs = due.rows.flatMap((post) =>
      post.accounts.map((accountId) => publishJobRow(post.id, accountId, post.attempts)),
    );
    return { started: due.rowCount ?? 0, rows: await writeOutbox(tx, { jobs }) };
  });
  void ctx.relay.publishCommitted(rows);
  return started;
}

/** Moves the due posts to publishing and answers each with its targets still to publish. */
const START_DUE = {
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
