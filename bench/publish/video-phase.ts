// 6. Video (issue 28): Reels while the network processes them, and image posts sent right behind
// them. The sandbox keeps each Reel's container IN_PROGRESS for VIDEO_PROCESSING_MS; the worker
// gives the slot back meanwhile (the target waits with waiting_until), so it holds more Reels in
// processing than it has slots, and the images behind them publish as if the Reels were not there.
import { readFile } from 'node:fs/promises';
import { uploadFile, videoFixture } from '@svc/testing';
import pg from 'pg';
import type { RunContext } from './context.ts';
import {
  pool,
  run,
  say,
  sleep,
  VIDEO_IMAGE_POSTS,
  VIDEO_POSTS,
  VIDEO_PROCESSING_MS,
  WORKSPACES,
} from './settings.ts';

export interface VideoResults {
  /** POST → post published, per Reel and per image post behind them. */
  reelToSettled: number[];
  imageToSettled: number[];
  /** The most Reel targets waiting on processing at one moment (sampled every 100 ms). */
  heldAtOnce: number;
  notPublished: number;
}

/** One Reel per workspace (each account's daily limit is far away), uploaded before the phase. */
async function uploadReels(ctx: RunContext): Promise<string[]> {
  const bytes = await readFile(videoFixture('reel-h264-aac.mp4'));
  const videos: string[] = [];
  await pool(WORKSPACES, 4, async (i) => {
    videos[i] = await uploadFile(ctx.gatewayUrl, ctx.key, ctx.fixtureOf(i).workspace, bytes, 'reel.mp4');
  });
  return videos;
}

/** The largest number of targets waiting (on processing: the only wait in this phase) until `done`. */
async function sampleHeld(databaseUrl: string, done: { finished: boolean }): Promise<number> {
  const db = new pg.Client({ connectionString: databaseUrl, options: '-c search_path=publishing' });
  await db.connect();
  let most = 0;
  try {
    while (!done.finished) {
      const { rows } = await db.query<{ n: number }>(
        `SELECT count(*)::int AS n FROM post_targets WHERE waiting_until IS NOT NULL AND status = 'publishing'`,
      );
      most = Math.max(most, rows[0]?.n ?? 0);
      await sleep(100);
    }
  } finally {
    await db.end();
  }
  return most;
}

async function create(ctx: RunContext, body: object, sent: Map<string, number>) {
  const t0 = performance.now();
  const created = await ctx.gateway.call('POST', '/v1/posts', body);
  if (created.status !== 201)
    throw new Error(`video phase: ${created.status} ${JSON.stringify(created.body)}`);
  sent.set(created.body.id as string, t0);
  return created.body.id as string;
}

export async function videoPhase(ctx: RunContext, databaseUrl: string): Promise<VideoResults> {
  const videos = await uploadReels(ctx);
  say(
    `▶ video: ${VIDEO_POSTS} Reels processed ${VIDEO_PROCESSING_MS} ms each, then ${VIDEO_IMAGE_POSTS} image posts right behind them …`,
  );
  await fetch(`${ctx.sandboxUrl}/__sandbox/config`, {
    method: 'POST',
    headers: { 'content-type': 'application/json' },
    body: JSON.stringify({ video_processing_ms: VIDEO_PROCESSING_MS }),
  });
  const done = { finished: false };
  const held = sampleHeld(databaseUrl, done);
  const sent = new Map<string, number>();
  const reels: string[] = [];
  await pool(VIDEO_POSTS, 8, async (i) => {
    const f = ctx.fixtureOf(i);
    const body = {
      workspace: f.workspace,
      caption: `Bench reel ${run} #${i}`,
      media: [videos[i % WORKSPACES]],
      targets: [{ account: f.ig.id, format: 'reel' }],
    };
    reels[i] = await create(ctx, body, sent);
  });
  const images: string[] = [];
  await pool(VIDEO_IMAGE_POSTS, 8, async (i) => {
    images[i] = await create(ctx, ctx.postBody(i, 'behind'), sent);
  });
  try {
    await ctx.watcher.all([...reels, ...images], VIDEO_PROCESSING_MS + 120_000);
  } finally {
    done.finished = true;
  }
  const toSettled = (ids: string[]) =>
    ids.map((id) => (ctx.watcher.settled.get(id)?.at ?? Number.NaN) - (sent.get(id) ?? 0));
  const notPublished = [...reels, ...images].filter(
    (id) => ctx.watcher.settled.get(id)?.status !== 'published',
  );
  return {
    reelToSettled: toSettled(reels),
    imageToSettled: toSettled(images),
    heldAtOnce: await held,
    notPublished: notPublished.length,
  };
}
