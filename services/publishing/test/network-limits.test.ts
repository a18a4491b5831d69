import { api, workspaceWithAccounts as connectedWorkspace, eventually } from '@svc/testing';
import { type Stack, startStack } from '@svc/testing/stack';
import sharp from 'sharp';
import { afterAll, afterEach, beforeAll, describe, expect, it } from 'vitest';

/**
 * Publishing paced by Meta's limits instead of failed by them: usage near a limit slows the
 * pipeline, a throttled account's target waits for the time Meta gave and then publishes, and a
 * Meta outage defers targets until it is over. Every target is still published exactly once.
 */
let stack: Stack;
let call: ReturnType<typeof api>;
let key: string;

beforeAll(async () => {
  // The breaker's cooldown grows to 4 s at most here (a minute in production), so the outage case
  // resumes within seconds of Meta coming back.
  stack = await startStack({
    UNAUTHENTICATED_LIMIT_PER_MINUTE: '100000',
    GRAPH_API_BREAKER_MAX_COOLDOWN_MS: '4000',
  });
  key = (await stack.system.createPartner(undefined, { limitPerMinute: 100_000 })).key;
  call = api(stack.gateway.url, key);
});
afterEach(() =>
  stack.sandboxControl('POST', '/__sandbox/config', { usage: null, throttle: null, outage: null }),
);
afterAll(() => stack.stop());

interface Target {
  account: string;
  status: string;
  error: string | null;
  waiting_until: string | null;
}

async function workspaceWithAccounts(name: string) {
  const { workspace, ig, page } = await connectedWorkspace(stack, call, {
    page: name,
    username: name.toLowerCase(),
  });
  const bytes = await sharp({ create: { width: 1080, height: 1080, channels: 3, background: '#c87828' } })
    .jpeg()
    .toBuffer();
  const form = new FormData();
  form.append('workspace', workspace);
  form.append('file', new Blob([new Uint8Array(bytes)]), 'photo.jpeg');
  const uploaded = await fetch(`${stack.gateway.url}/v1/media`, {
    method: 'POST',
    headers: { authorization: `Bearer ${key}` },
    body: form,
  });
  const media = ((await uploaded.json()) as { id: string }).id;
  return { workspace, ig, page, media };
}

async function post(
  account: Awaited<ReturnType<typeof workspaceWithAccounts>>,
  caption: string,
  targets: string[],
) {
  const created = await call('POST', '/v1/posts', {
    workspace: account.workspace,
    caption,
    media: [account.media],
    targets,
  });
  expect(created.status).toBe(201);
  return created.body.id as string;
}

const read = async (id: string) =>
  (await call('GET', `/v1/posts/${id}`)).body as { status: string; targets: Target[] };

async function settled(id: string, ms: number) {
  return eventually(async () => {
    const body = await read(id);
    if (body.status === 'publishing') throw new Error(`post ${id} still publishing`);
    return body;
  }, ms);
}

async function publishedTimes(caption: string, platformId: string): Promise<number> {
  const log = await stack.sandboxControl<{ data: { caption: string; account_id: string }[] }>(
    'GET',
    '/__sandbox/published',
  );
  return log.data.filter((p) => p.caption === caption && p.account_id === platformId).length;
}

describe("publishing paced by Meta's limits", () => {
  // Guarantee: an account near its limit gets its calls spaced out, so its posts take longer, and
  // none of them fails for it.
  it('slows down for an account near its limit without failing a post', async () => {
    const account = await workspaceWithAccounts('Pacing');
    const publishThree = async (label: string) => {
      const started = Date.now();
      const ids = await Promise.all([1, 2, 3].map((n) => post(account, `${label} ${n}`, [account.ig.id])));
      const posts = await Promise.all(ids.map((id) => settled(id, 30_000)));
      expect(posts.map((p) => p.status)).toEqual(['published', 'published', 'published']);
      return Date.now() - started;
    };
    const unpaced = await publishThree('unpaced');
    await stack.sandboxControl('POST', '/__sandbox/config', {
      usage: {
        business: {
          [account.ig.platform_id]: [
            {
              type: 'instagram',
              call_count: 90,
              total_cputime: 5,
              total_time: 5,
              estimated_time_to_regain_access: 0,
            },
          ],
        },
      },
    });
    const paced = await publishThree('paced');
    // The three container creates go out together, before an answer tells the client of the 90%;
    // the three publish calls are then spaced 1.2 s apart: at least 2.4 s more than unpaced.
    expect(paced).toBeGreaterThan(unpaced + 2_000);
    for (const n of [1, 2, 3]) expect(await publishedTimes(`paced ${n}`, account.ig.platform_id)).toBe(1);
    const metrics = await (await fetch(`http://127.0.0.1:${stack.publishing.opsPort}/metrics`)).text();
    expect(metrics).toMatch(/graph_api_usage_percent\{scope="business"[^}]*\} 90\n/);
    expect(metrics).toMatch(
      /graph_api_calls_total\{endpoint="POST \/\{id\}\/media_publish",outcome="ok"[^}]*\} 6\n/,
    );
  });

  // Guarantee: a rate-limit error that says when access comes back defers the target (the post
  // stays publishing and the target shows waiting_until) and it publishes after that, once.
  it('publishes a throttled target after the time Meta gave', async () => {
    const account = await workspaceWithAccounts('Throttled');
    // Three seconds (Meta gives whole minutes; the sandbox takes a fraction so the test is short).
    await stack.sandboxControl('POST', '/__sandbox/config', {
      throttle: { business_id: account.ig.platform_id, regain_minutes: 0.05 },
    });
    const id = await post(account, 'throttled', [account.ig.id, account.page.id]);
    const waiting = await eventually(async () => {
      const body = await read(id);
      const ig = body.targets.find((t) => t.account === account.ig.id);
      const page = body.targets.find((t) => t.account === account.page.id);
      if (!ig?.waiting_until || page?.status !== 'published') throw new Error('not deferred yet');
      return { body, ig };
    }, 10_000);
    expect(waiting.body.status).toBe('publishing');
    expect(waiting.ig).toMatchObject({ status: 'publishing', error: null });
    expect(Date.parse(waiting.ig.waiting_until ?? '')).toBeGreaterThan(Date.now());
    await stack.sandboxControl('POST', '/__sandbox/config', { throttle: null });
    const done = await settled(id, 20_000);
    expect(done.status).toBe('published');
    expect(done.targets.every((t) => t.status === 'published' && t.waiting_until === null)).toBe(true);
    expect(await publishedTimes('throttled', account.ig.platform_id)).toBe(1);
    expect(await publishedTimes('throttled', account.page.platform_id)).toBe(1);
  });

  // Guarantee: a Meta outage of 30 s fails no target: they wait (the breaker stops the calls) and
  // publish once Meta answers again, each exactly once.
  it('fails no target while Meta is down for 30 s', async () => {
    const account = await workspaceWithAccounts('Outage');
    await stack.sandboxControl('POST', '/__sandbox/config', { outage: { status: 503 } });
    const down = Date.now();
    const ids = await Promise.all(
      [1, 2, 3].map((n) => post(account, `outage ${n}`, [account.ig.id, account.page.id])),
    );
    // A deferred target shows when it is tried next (cleared while its job runs again).
    await eventually(async () => {
      const targets = (await Promise.all(ids.map(read))).flatMap((p) => p.targets);
      if (!targets.some((t) => t.waiting_until)) throw new Error('no target deferred yet');
      return true;
    }, 15_000);
    while (Date.now() - down < 30_000) {
      const posts = await Promise.all(ids.map(read));
      expect(posts.map((p) => p.status)).toEqual(['publishing', 'publishing', 'publishing']);
      expect(posts.flatMap((p) => p.targets).filter((t) => t.status === 'failed')).toEqual([]);
      await new Promise((resolve) => setTimeout(resolve, 2_000));
    }
    await stack.sandboxControl('POST', '/__sandbox/config', { outage: null });
    const posts = await Promise.all(ids.map((id) => settled(id, 30_000)));
    expect(posts.map((p) => p.status)).toEqual(['published', 'published', 'published']);
    for (const n of [1, 2, 3]) {
      expect(await publishedTimes(`outage ${n}`, account.ig.platform_id)).toBe(1);
      expect(await publishedTimes(`outage ${n}`, account.page.platform_id)).toBe(1);
    }
  }, 90_000);
});
