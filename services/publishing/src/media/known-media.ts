import { LocalCache } from '@svc/cache';
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
 * A kept row outlives its deletion on another replica by at most this long. That is harmless:
 * writing a post locks its media rows (a deleted one refuses the post) and a signed read finds no
 * file.
 */
const MAX_AGE_MS = 60_000;

/**
 * Media rows as post checks and signed-URL reads need them, kept: the post's checks read a row,
 * then each target's network fetches the file through a signed URL, which needs it again. Postgres
 * is the busiest process on the publish path, and reading every time cost it one more statement
 * per target.
 */
export class KnownMediaRows {
  private readonly kept = new LocalCache<KnownMedia>({ maxAgeMs: MAX_AGE_MS, maxEntries: 20_000 });

  constructor(private readonly pool: pg.Pool) {}

  /** The media of these ids that exist, by id. */
  async read(ids: readonly string[]): Promise<Map<string, KnownMedia>> {
    const found = new Map<string, KnownMedia>();
    const missing: string[] = [];
    for (const id of ids) {
      const kept = this.kept.peek(id);
      if (kept) found.set(id, kept);
      else missing.push(id);
    }
    if (missing.length === 0) return found;
    const { rows } = await this.pool.query<KnownMedia>({ ...KNOWN_MEDIA, values: [missing] });
    for (const media of rows) {
      this.kept.set(media.id, media);
      found.set(media.id, media);
    }
    return found;
  }

  forget(id: string): void {
    this.kept.forget(id);
  }

  close(): void {
    this.kept.close();
  }
}
