// The history a publishing database in service holds: posts published before the run, each to its
// workspace's two accounts, older than any publishing window. Without it every table starts empty
// and grows thirtyfold within the first phase, so Postgres plans the pipeline's statements (plans
// a connection keeps) for tables of a few rows: scans no database in service would run.
import pg from 'pg';
import type { Fixture } from './fixtures.ts';

/** Published posts per fixture workspace, spread over the 90 days before the last 2. */
const POSTS_PER_WORKSPACE = 500;

export async function seedHistory(
  databaseUrl: string,
  partnerId: string,
  fixtures: Fixture[],
): Promise<number> {
  const client = new pg.Client({ connectionString: databaseUrl });
  await client.connect();
  try {
    const workspaces = fixtures.map((f) => f.workspace);
    await client.query('BEGIN');
    await client.query(
      `INSERT INTO publishing.posts (id, partner_id, workspace_id, caption, media_ids, media, status,
                                     published_at, attempts, unsettled, created_by, created_at, updated_at)
       SELECT 'post_history_' || w.n || '_' || g, $1, w.workspace, 'History #' || g, '{}', '[]', 'published',
              t.at, 1, 0, 'bench', t.at, t.at
         FROM unnest($2::text[]) WITH ORDINALITY AS w(workspace, n),
              generate_series(1, $3::int) AS g,
              LATERAL (SELECT now() - interval '2 days' - g * interval '90 days' / $3::int AS at) AS t`,
      [partnerId, workspaces, POSTS_PER_WORKSPACE],
    );
    await client.query(
      `INSERT INTO publishing.post_targets (post_id, account_id, position, network, username, status,
                                            platform_post_id, published_at, updated_at)
       SELECT p.id, t.account_id, t.position, t.network, 'history', 'published',
              'history_' || t.position || '_' || p.id, p.published_at, p.published_at
         FROM publishing.posts p
         JOIN unnest($2::text[], $3::text[], $4::text[]) AS w(workspace, ig, page) ON w.workspace = p.workspace_id
         CROSS JOIN LATERAL (VALUES (0, w.ig, 'photo_network'), (1, w.page, 'page_network')) AS t(position, account_id, network)
        WHERE p.partner_id = $1 AND p.id LIKE 'post_history_%'`,
      [partnerId, workspaces, fixtures.map((f) => f.ig.id), fixtures.map((f) => f.page.id)],
    );
    await client.query('COMMIT');
    await client.query('ANALYZE publishing.posts, publishing.post_targets');
    return fixtures.length * POSTS_PER_WORKSPACE;
  } finally {
    await client.end();
  }
}
