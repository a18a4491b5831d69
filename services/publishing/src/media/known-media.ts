import type pg from 'pg';

/** What post checks and signed-URL reads need of a media row; none of it ever changes. */
export interface KnownMedia {
  id: string;
  partnerId: string;
  workspaceId: string;
  kind: string;
  mime: string;
  width: number;
  height: number;
  storageKey: string;
}

const KNOWN_MEDIA = {
  name: 'publishing_known_media',
  text: `SELECT id, partner_id AS "partnerId", workspace_id AS "workspaceId", kind, mime, width, height,
                storage_key AS "storageKey"
           FROM media WHERE id = ANY($1)`,
};

/**
 * The media of these ids that exist, by id, as post checks and signed-URL reads need them. Read
 * every time: keeping them for a minute measured no faster in bench:publish (122 targets/s
 * without, 113 and 120 with) and no better POST latency.
 */
export async function readMediaRows(pool: pg.Pool, ids: readonly string[]): Promise<Map<string, KnownMedia>> {
  if (ids.length === 0) return new Map();
  const { rows } = await pool.query<KnownMedia>({ ...KNOWN_MEDIA, values: [ids] });
  return new Map(rows.map((media) => [media.id, media]));
}
