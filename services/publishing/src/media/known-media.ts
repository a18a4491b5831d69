import { LocalCache } from '@svc/bus';
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
 * Media rows as post checks and signed-URL reads need them, kept for a minute: a post reads its
 * media when it is created, and the networks fetch each file once per target, while no field read
 * here ever changes. A deleted media may stay known for that minute, and neither use trusts it
 * alone: a post's insert locks its media and writes nothing when one is gone, and a deleted
 * media's file is removed, so its signed URL finds nothing.
 */
export class KnownMediaRows {
  private readonly rows = new LocalCache<KnownMedia>({ maxAgeMs: 60_000, maxEntries: 10_000 });

  constructor(private readonly pool: pg.Pool) {}

  /** The media of these ids that exist, by id. */
  async read(ids: readonly string[]): Promise<Map<string, KnownMedia>> {
    const result = new Map<string, KnownMedia>();
    const missing: string[] = [];
    for (const id of ids) {
      const kept = this.rows.peek(id);
      if (kept) result.set(id, kept);
      else missing.push(id);
    }
    if (missing.length === 0) return result;
    const { rows } = await this.pool.query<KnownMedia>({ ...KNOWN_MEDIA, values: [missing] });
    for (const media of rows) {
      this.rows.set(media.id, media);
      result.set(media.id, media);
    }
    return result;
  }

  forget(id: string): void {
    this.rows.forget(id);
  }

  close(): void {
    this.rows.close();
  }
}
