// Where a target's time goes in bench:publish, from publishing's own records.
import pg from 'pg';
import { fmt } from './settings.ts';

/**
 * Where a target's time goes, from what the pipeline records (publishing's tables, all stamped
 * by Postgres or the worker): post committed → its job relayed to NATS → the worker sent the
 * publish call (Instagram: after container create + status) → published (publish/photo +
 * permalink answered) → the target settled → the post event relayed. Medians per network.
 */
export async function stepBreakdown(databaseUrl: string, captionLike: string): Promise<string[]> {
  const client = new pg.Client({ connectionString: databaseUrl });
  await client.connect();
  try {
    const { rows } = await client.query<{ network: string; step: string; p50: number; p90: number }>(
      `WITH t AS (
         SELECT t.network,
                p.created_at AS created,
                j.published_at AS job_relayed,
                t.publish_sent_at AS sent,
                t.published_at AS published,
                t.updated_at AS settled,
                e.created_at AS event_written,
                e.published_at AS event_relayed
           FROM publishing.posts p
           JOIN publishing.post_targets t ON t.post_id = p.id
           JOIN publishing.outbox j ON j.id = 'job_' || p.id || '_' || t.account_id || '_1'
           LEFT JOIN publishing.outbox e ON e.subject LIKE 'post.%' AND e.payload->'data'->'post'->>'id' = p.id
          WHERE p.caption LIKE $1 AND t.status = 'published')
       SELECT network, step,
              percentile_cont(0.5) WITHIN GROUP (ORDER BY ms) AS p50,
              percentile_cont(0.9) WITHIN GROUP (ORDER BY ms) AS p90
         FROM t, LATERAL (VALUES
           ('1 post committed → job relayed to NATS', extract(epoch FROM job_relayed - created) * 1000),
           ('2 job relayed → publish call sent', extract(epoch FROM sent - job_relayed) * 1000),
           ('3 publish call sent → published', extract(epoch FROM published - sent) * 1000),
           ('4 published → target settled', extract(epoch FROM settled - published) * 1000),
           ('5 post settled → event relayed', extract(epoch FROM event_relayed - event_written) * 1000)
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
