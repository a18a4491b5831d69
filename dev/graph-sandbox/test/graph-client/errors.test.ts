import { GraphApiError, GraphClient } from '@svc/graph-client';
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
  // Each case starts from a client that has not been told of another case's usage or limits.
  await h.renewClient();
  h.sleeps.length = 0;
  await h.control('DELETE', '/__sandbox/faults');
});

const fault = (body: Record<string, unknown>) => h.control('POST', '/__sandbox/faults', body);
const transient = {
  code: 2,
  message: 'An unexpected error has occurred. Please retry your request later.',
  is_transient: true,
};

describe('error classes through the client', () => {
  // Guarantee: a transient error (code 2, HTTP 500) is retried with backoff and the call then succeeds.
  it('retries a transient error then succeeds', async () => {
    await fault({ method: 'GET', path: '/*/media', status: 500, error: transient });
    const media = await h.client.instagram.recentMedia(c.pageToken, c.igId);
    expect(media).toEqual([]);
    expect(h.sleeps).toEqual([75]); // 100 ms step × jitter factor 0.75 (random fixed at 0.5)
  });

  // Guarantee: a transient error that persists is surfaced after maxAttempts as network_error with Meta's message and details; backoff grows.
  it('surfaces a persistent transient error after the retries', async () => {
    await fault({
      path: '/*/feed',
      times: 5,
      status: 500,
      error: { code: 1, message: 'An unknown error occurred' },
    });
    const error = await failure<GraphApiError>(() =>
      h.client.pages.postToFeed(c.pageToken, c.pageId, { message: 'x' }),
    );
    expect(error).toBeInstanceOf(GraphApiError);
    expect(error.httpStatus).toBe(502);
    expect(error.message).toBe('An unknown error occurred');
    expect(error.toBody()).toMatchObject({
      code: 'network_error',
      details: { code: 1, subcode: null, type: 'OAuthException' },
    });
    expect(typeof (error.details as { fbtrace_id: unknown }).fbtrace_id).toBe('string');
    expect(h.sleeps).toEqual([75, 150]);
  });

  // Guarantee: rate limits (4, 17, 32, 613) are surfaced at once — one call, no sleep — with the usage headers' content.
  it.each([4, 17, 32, 613])('surfaces rate limit code %i at once with usage', async (code) => {
    await fault({
      path: '/me/accounts',
      times: 3,
      error: { code, message: `(#${code}) request limit reached`, is_transient: true },
    });
    const error = await failure<GraphApiError>(() => h.client.accounts.pages(c.userToken));
    expect(error.kind).toBe('rate_limit');
    expect(error.usage?.app).toMatchObject({ call_count: 100 });
    expect((error.details as { usage: unknown }).usage).toEqual(error.usage);
    expect(h.sleeps).toEqual([]);
    // Only one of the three faulted calls was used: the client did not hammer.
    expect((await fault({ path: '/nothing', error: { code: 1 } })).status).toBe(201);
    const next = await failure<GraphApiError>(() => h.client.accounts.pages(c.userToken));
    expect(next.kind).toBe('rate_limit');
  });

  // Guarantee: a Business Use Case limit (80001) carries the per-object usage and the time to regain access, in seconds.
  it('reads x-business-use-case-usage', async () => {
    await fault({
      path: `/${c.pageId}/feed`,
      error: { code: 80001, message: 'There have been too many calls to this Page account.' },
    });
    const error = await failure<GraphApiError>(() =>
      h.client.pages.postToFeed(c.pageToken, c.pageId, { message: 'x' }),
    );
    expect(error.kind).toBe('rate_limit');
    expect(error.usage?.retryAfterSeconds).toBe(900);
    expect(error.usage?.businessUseCase?.[c.pageId]?.[0]).toMatchObject({ type: 'pages' });
  });

  // Guarantee: a missing permission is a permission error, not retried, and not a token problem.
  it('classifies a missing permission', async () => {
    const narrow = await connectUser(h, ['pages_show_list']);
    const error = await failure<GraphApiError>(() =>
      h.client.instagram.publishingLimit(narrow.pageToken, narrow.igId),
    );
    expect(error.details).toMatchObject({ code: 10 });
    expect(error.kind).toBe('permission');
    expect(error.tokenProblem).toBeNull();
    expect(h.sleeps).toEqual([]);
  });

  // Guarantee: a read that times out is a clear network_error of kind timeout, retried like any unanswered read.
  it('times out a slow read and retries it', async () => {
    await fault({ path: '/me', times: 3, delay_ms: 600 });
    const error = await failure<GraphApiError>(() => h.client.accounts.me(c.userToken));
    expect(error.kind).toBe('timeout');
    expect(error.code).toBe('network_error');
    expect(error.message).toMatch(/did not answer within 300 ms \(GET \/me\)/);
    expect(h.sleeps).toHaveLength(2);
  });

  // Guarantee: a publish that times out is NOT resent (it may have gone through); the recent-media check shows exactly one post.
  it('never resends a publish after a timeout', async () => {
    const { id } = await h.client.instagram.createImageContainer(c.pageToken, c.igId, {
      imageUrl: `${h.internet.url}/img/square.jpg`,
    });
    await fault({ method: 'POST', path: '/*/media_publish', delay_ms: 600 });
    const error = await failure<GraphApiError>(() => h.client.instagram.publish(c.pageToken, c.igId, id));
    expect(error.kind).toBe('timeout');
    expect(h.sleeps).toEqual([]);
    await new Promise((resolve) => setTimeout(resolve, 400));
    const recent = await h.client.instagram.recentMedia(c.pageToken, c.igId);
    expect(recent).toHaveLength(1);
  });

  // Guarantee: nobody listening is a network_error of kind network, with the cause in the message.
  it('reports an unreachable Graph host', async () => {
    const dead = new GraphClient({ ...h.client.config, baseUrl: 'http://127.0.0.1:1' });
    const error = await failure<GraphApiError>(() => dead.accounts.me('t'));
    expect(error.kind).toBe('network');
    expect(error.httpStatus).toBe(502);
  });
});
