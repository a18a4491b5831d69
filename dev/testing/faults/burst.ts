import type pg from 'pg';
import type { SandboxControl } from '../src/sandbox.ts';
import type { Gateways } from './gateways.ts';

/** What one burst sent: posts (each to every Page) and inbound messages, by their unique text. */
export interface Burst {
  tag: string;
  posts: string[];
  messages: string[];
}

export interface World {
  gateways: Gateways;
  sandboxControl: SandboxControl;
  workspace: string;
  /** The connected Pages: account ids (targets) and their ids at the network (inbound). */
  accounts: string[];
  pageIds: string[];
  db: pg.Pool;
  delivered: () => Set<string>;
}

/**
 * Posts and inbound messages sent over `spreadMs` (so the fault lands in the middle), one post and
 * one message at a time. Each post carries an Idempotency-Key, so a client retry creates it once.
 */
export async function sendBurst(world: World, tag: string, count: number, spreadMs: number): Promise<Burst> {
  const burst: Burst = { tag, posts: [], messages: [] };
  const sends: Promise<unknown>[] = [];
  for (let i = 0; i < count; i++) {
    const caption = `${tag} post ${i}`;
    const text = `${tag} message ${i}`;
    burst.posts.push(caption);
    burst.messages.push(text);
    const body = { workspace: world.workspace, caption, targets: world.accounts };
    sends.push(world.gateways.call('POST', '/v1/posts', body, `${tag}-${i}`));
    const page = world.pageIds[i % world.pageIds.length];
    sends.push(
      world.sandboxControl('POST', `/__sandbox/pages/${page}/messages`, {
        from: { name: 'Fault Person' },
        text,
      }),
    );
    await new Promise((resolve) => setTimeout(resolve, spreadMs / count));
  }
  await Promise.all(sends);
  return burst;
}

export interface Outcome {
  lost: number;
  duplicated: number;
  /** Events stored and not (yet) delivered to the partner's endpoint. */
  undelivered: number;
  /** What is lost, for the report (`published: <caption>`, `stored: <text>`...). */
  missing: string[];
}

/** Where a burst stands now, read from outside: the sandbox's publish log, the stores, the partner's endpoint. */
export async function outcome(world: World, burst: Burst): Promise<Outcome> {
  const log = await world.sandboxControl<{ data: { caption?: string; account_id: string }[] }>(
    'GET',
    '/__sandbox/published',
  );
  const like = `${burst.tag} %`;
  let lost = 0;
  let duplicated = 0;
  const missing: string[] = [];
  const miss = (what: string) => {
    lost++;
    missing.push(what);
  };
  const perTarget = world.pageIds.length;
  for (const caption of burst.posts) {
    const copies = log.data.filter((p) => p.caption === caption).length;
    for (let i = copies; i < perTarget; i++) miss(`published: ${caption}`);
    duplicated += Math.max(0, copies - perTarget);
  }
  const stored = await world.db.query<{ text: string; n: number }>(
    'SELECT text, count(*)::int AS n FROM inbox.messages WHERE text LIKE $1 GROUP BY text',
    [like],
  );
  const events = await world.db.query<{ id: string; type: string; body: string }>(
    `SELECT id, type, body FROM webhooks.events WHERE type IN ('message.received', 'post.published')
      AND body LIKE $1`,
    [`%${burst.tag} %`],
  );
  for (const text of burst.messages) {
    const n = stored.rows.find((r) => r.text === text)?.n ?? 0;
    const announced = events.rows.filter(
      (e) => e.type === 'message.received' && e.body.includes(text),
    ).length;
    if (n === 0) miss(`stored: ${text}`);
    if (announced === 0) miss(`announced: ${text}`);
    duplicated += Math.max(0, n - 1) + Math.max(0, announced - 1);
  }
  for (const caption of burst.posts) {
    const announced = events.rows.filter(
      (e) => e.type === 'post.published' && e.body.includes(`"${caption}"`),
    ).length;
    if (announced === 0) miss(`post.published: ${caption}`);
    duplicated += Math.max(0, announced - 1);
  }
  const delivered = world.delivered();
  const undelivered = events.rows.filter((e) => !delivered.has(e.id)).length;
  return { lost, duplicated, undelivered, missing };
}
