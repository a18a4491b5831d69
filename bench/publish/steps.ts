// Where a target's time goes in bench:publish, from the pipeline's own records.
import pg from 'pg';
import { fmt } from './settings.ts';

/**
 * Where a target's time goes, from what the pipeline records (publishing's and webhooks' tables,
 * all stamped by Postgres or the services): post committed → the worker sent the publish call
 * (its job relayed, queued and claimed; Instagram: after the container create) → published
 * (publish/photo + permalink answered) → the target settled → the post's event stored by
 * webhooks (relayed, through NATS, group-committed). Medians per network.
 */
export async function stepBreakdown(databaseUrl: string, captionLike: string): Promise<string[]> {
  const client = new pg.Client({ connectionString: databaseUrl });
  await client.connect();
  try {
    const { rows } = await client.query<{ network: string; step: string; p50: number; p90: number }>(
      `WITH e AS (
         SELECT (body::jsonb)->'data'->'post'->>'id' AS post_id, created_at, stored_at
           FROM webhooks.events WHERE type LIKE 'post.%'),
       t AS (
         SELECT t.network,
                p.created_at AS created,
                t.publish_sent_at AS sent,
                t.published_at AS published,
                t.updated_at AS settled,
                e.created_at AS event_made,
                e.stored_at AS event_stored
           FROM publishing.posts p
           JOIN publishing.post_targets t ON t.post_id = p.id
           LEFT JOIN e ON e.post_id = p.id
          WHERE p.caption LIKE $1 AND t.status = 'published')
       SELECT network, step,
              percentile_cont(0.5) WITHIN GROUP (ORDER BY ms) AS p50,
              percentile_cont(0.9) WITHIN GROUP (ORDER BY ms) AS p90
         FROM t, LATERAL (VALUES
           ('1 post committed → publish call sent', extract(epoch FROM sent - created) * 1000),
           ('2 publish call sent → published', extract(epoch FROM published - sent) * 1000),
           ('3 published → target settled', extract(epoch FROM settled - published) * 1000),
           ('4 post settled → event stored', extract(epoch FROM event_stored - event_made) * 1000)
         ) AS s(step, ms)
        GROUP BY network, step ORDER BY network, step`,
      [captionLike],
    );
    return rows.map(
      (r) =>
        `${r.network.padEnd(13)} ${r.step.padEnd(40)} p50 ${fmt(Number(r.p50))} ms, p90 ${fmt(Number(r.p90))} ms`,
    );
  } finally {
    await client.end();
  }
}
