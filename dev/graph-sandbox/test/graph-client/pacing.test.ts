import type { GraphApiError } from '@svc/graph-client';
import { afterAll, beforeAll, beforeEach, describe, expect, it } from 'vitest';
import { type Connected, connectUser, failure, type Harness, startHarness } from './harness.ts';

let h: Harness;
let c: Connected;
beforeAll(async () => {
  h = await startHarness({}, 300);
  c = await connectUser(h);
});
afterAll(() => h.close());
beforeEach(async () => {
  await h.control('POST', '/__sandbox/config', { usage: null, throttle: null, outage: null });
  await h.renewClient();
  h.sleeps.length = 0;
});

const config = (body: Record<string, unknown>) => h.control('POST', '/__sandbox/config', body);
const businessUsage = (percent: number, minutes = 0) => [
  {
    type: 'instagram',
    call_count: percent,
    total_cputime: 1,
    total_time: 1,
    estimated_time_to_regain_access: minutes,
  },
];

describe("pacing by Meta's usage headers", () => {
  // Guarantee: an account near its limit gets its calls spaced out (wider the nearer), while
  // another account of the same app is not held back; nothing fails.
  it('spaces the calls of an account near its limit', async () => {
    await config({ usage: { business: { [c.igId]: businessUsage(90) } } });
    for (let i = 0; i < 3; i++) await h.client.instagram.recentMedia(c.pageToken, c.igId);
    // The first answer told the client 90%: the second call starts the spacing, the third waits
    // 1.2 s after it (the test's sleeps return at once, so the whole spacing is still to wait).
    expect(h.sleeps).toHaveLength(1);
    expect(h.sleeps[0]).toBeGreaterThan(1_100);
    expect(h.sleeps[0]).toBeLessThanOrEqual(1_200);
    await h.client.pages.recentPosts(c.pageToken, c.pageId);
    expect(h.sleeps).toHaveLength(1);
  });

  // Guarantee: once Meta throttles an account and says when access comes back, the client does
  // not send calls for it before then (no hammering); the error says when to try again.
  it('holds a throttled account until the time Meta gave', async () => {
    await config({ throttle: { business_id: c.igId, regain_minutes: 2 } });
    const first = await failure<GraphApiError>(() => h.client.instagram.recentMedia(c.pageToken, c.igId));
    expect(first.kind).toBe('rate_limit');
    expect(first.graph.code).toBe(80002);
    const regain = first.retryAt?.getTime() ?? 0;
    expect(regain - Date.now()).toBeGreaterThan(110_000);
    await config({ throttle: null });
    // Meta lets it through again now, but it said two minutes: the client keeps to that.
    const held = await failure<GraphApiError>(() => h.client.instagram.recentMedia(c.pageToken, c.igId));
    expect(held.kind).toBe('rate_limit');
    expect(held.message).toMatch(/not sent/);
    // The same moment, as the client recorded it from the answer (within the answer's handling).
    expect(Math.abs((held.retryAt?.getTime() ?? 0) - regain)).toBeLessThan(50);
  });

  // Guarantee: during a Meta outage the client stops calling after a few failures in a row and
  // says when it will try again; a probe after the cooldown closes the breaker once Meta is back.
  it('opens the breaker during an outage and closes it once Meta answers', async () => {
    await config({ outage: { status: 503 } });
    for (let i = 0; i < 2; i++) {
      const down = await failure<GraphApiError>(() => h.client.instagram.recentMedia(c.pageToken, c.igId));
      expect(down.outage).toBe(true);
    }
    // Five failed answers in a row (three tries, then two): the breaker is open.
    const paused = await failure<GraphApiError>(() => h.client.accounts.pages(c.userToken));
    expect(paused.kind).toBe('unavailable');
    expect(paused.retryAt?.getTime()).toBeGreaterThan(Date.now());
    await config({ outage: null });
    await new Promise((resolve) => setTimeout(resolve, (paused.retryAt?.getTime() ?? 0) - Date.now() + 50));
    expect(await h.client.accounts.pages(c.userToken)).toHaveLength(1);
    expect(await h.client.instagram.recentMedia(c.pageToken, c.igId)).toEqual([]);
  });
});
