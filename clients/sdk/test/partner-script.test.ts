import { readFile } from 'node:fs/promises';
import { connectThroughLink, createUser, eventually, Receiver, videoFixture } from '@svc/testing';
import { type Stack, startStack } from '@svc/testing/stack';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { ApiError, type Client, createClient, uploadMedia, verifyWebhook } from '../src/index.ts';

/**
 * What a partner developer writes with the SDK, run against the real system (every service, real
 * Postgres/Redis/NATS, the graph-sandbox as the networks): each step is a generated method, each
 * answer a typed record, each refusal an ApiError.
 */
let stack: Stack;
let receiver: Receiver;
let api: Client;
let apiKey: string;

/** A 1x1 PNG: the upload reads its type and size from the bytes. */
const PIXEL = Buffer.from(
  'iVBORw0KGgoAAAANSUhEUgAAAAEAAAABCAYAAAAfFcSJAAAADUlEQVR42mNk+M9QDwADhgGAWjR9awAAAABJRU5ErkJggg==',
  'base64',
);

beforeAll(async () => {
  stack = await startStack({ UNAUTHENTICATED_LIMIT_PER_MINUTE: '100000' });
  receiver = await Receiver.start();
  apiKey = (await stack.createPartner()).key;
  api = createClient({ baseUrl: stack.gateway.url, apiKey });
});
afterAll(async () => {
  await receiver?.close();
  await stack?.stop();
});

/** The first webhook delivery of a type, verified as a partner's endpoint verifies it. */
async function delivered(type: string, secret: string) {
  const request = await eventually(() => {
    const found = receiver.requests.find((r) => r.headers['x-service-event'] === type);
    if (!found) throw new Error(`no ${type} delivery yet`);
    return found;
  });
  return verifyWebhook({ secret, headers: request.headers, rawBody: request.body });
}

describe('a partner script through the SDK', () => {
  // Guarantee: the generated client reaches every step of the product's main path, from a new
  // workspace to a published post and an inbound DM, and its events verify with verifyWebhook.
  it('creates a workspace, connects, uploads, publishes, reads the inbox and verifies webhooks', async () => {
    const { secret } = await api.setWebhook({ body: { url: receiver.url } });
    if (!secret) throw new Error('the secret is shown when the webhook is set');
    const workspace = await api.createWorkspace({
      body: { name: 'Bakery', external_id: 'cust-42' },
      params: { header: { 'Idempotency-Key': 'workspace-cust-42', 'X-Request-Id': 'sdk-script-1' } },
    });
    const link = await api.createConnectLink({ params: { path: { id: workspace.id } }, body: {} });
    const user = await createUser(stack, [{ name: 'Bakery Page', instagram: { username: 'bakery_ig' } }]);
    await connectThroughLink(stack, link.url, 'page_network', { userId: user.user.id, decision: 'approve' });
    const accounts = await api.listWorkspaceAccounts({ params: { path: { id: workspace.id } } });
    const ig = accounts.data.find((a) => a.network === 'photo_network');
    const page = accounts.data.find((a) => a.network === 'page_network');
    if (!ig || !page) throw new Error('the connect flow did not connect both accounts');

    const media = await api.uploadMedia({
      body: { workspace: workspace.id, file: new Blob([PIXEL], { type: 'image/png' }) },
    });
    expect(media).toMatchObject({ workspace: workspace.id, mime: 'image/png', width: 1, height: 1 });
    const post = await api.createPost({
      params: { query: { wait: 'true' }, header: { 'Idempotency-Key': 'cms-42-v1' } },
      body: { workspace: workspace.id, caption: 'Fresh bread', media: [media.id], targets: [ig.id, page.id] },
    });
    // One operation answers a post (201) or, with dry_run=true, what would be sent (200).
    if ('dry_run' in post) throw new Error('not a dry run');
    expect(post.status).toBe('published');
    expect(post.targets.map((t) => t.status)).toEqual(['published', 'published']);

    const text = 'Open on Sunday?';
    await stack.sandboxControl('POST', `/__sandbox/instagram/${ig.platform_id}/messages`, {
      from: { username: 'fan', name: 'A Fan' },
      text,
    });
    const conversation = await eventually(async () => {
      const list = await api.listConversations({
        params: { query: { workspace: workspace.id, kind: 'dm' } },
      });
      if (!list.data[0]) throw new Error('no conversation yet');
      return list.data[0];
    });
    const messages = await api.listMessages({ params: { path: { id: conversation.id } } });
    expect(messages.data.map((m) => m.text)).toEqual([text]);

    const received = await delivered('message.received', secret);
    if (received.type !== 'message.received') throw new Error(`got ${received.type}`);
    expect(received.data.message.text).toBe(text); // typed: the payload of message.received
    expect(received.workspace).toBe(workspace.id);
    const published = await delivered('post.published', secret);
    if (published.type !== 'post.published') throw new Error(`got ${published.type}`);
    expect(published.data.post.id).toBe(post.id);
  });

  // Guarantee: a refusal is one typed error with the envelope's code and field, the HTTP status
  // and the request id the caller sent.
  it('throws ApiError with code, field, status and request id', async () => {
    const refused = await api
      .createPost({
        params: { header: { 'X-Request-Id': 'sdk-bad-post' } },
        body: { workspace: 'ws_nope', targets: [] },
      })
      .catch((error: unknown) => error);
    expect(refused).toBeInstanceOf(ApiError);
    expect(refused).toMatchObject({ status: 400, code: 'validation_error', requestId: 'sdk-bad-post' });
    expect((refused as ApiError).field).toBeTypeOf('string');
  });

  // Guarantee: over the key's limit, the call throws rate_limited with Retry-After in seconds.
  it('surfaces a 429 with retryAfter', async () => {
    const { key } = await stack.system.createPartner(undefined, { limitPerMinute: 2 });
    const limited = createClient({ baseUrl: stack.gateway.url, apiKey: key });
    await limited.listWorkspaces();
    await limited.listWorkspaces();
    const refused = await limited.listWorkspaces().catch((error: unknown) => error);
    expect(refused).toBeInstanceOf(ApiError);
    const error = refused as ApiError;
    expect(error).toMatchObject({ status: 429, code: 'rate_limited' });
    expect(error.retryAfter).toBeGreaterThan(0);
    expect(error.requestId).toMatch(/^req_/);
  });

  // Guarantee (issue 28): a video goes up resumably with uploadMedia in several parts, progress is
  // reported as they arrive, and the file becomes a video media item with its facts; a Reel can
  // then be checked with the generated createPost.
  it('uploads a video in parts with progress and checks a Reel with it', async () => {
    const workspace = await api.createWorkspace({ body: { name: 'SDK video' } });
    const file = await readFile(videoFixture('reel-h264-aac.mp4'));
    const progress: number[] = [];
    const media = await uploadMedia({
      baseUrl: stack.gateway.url,
      apiKey,
      workspace: workspace.id,
      file,
      filename: 'reel.mp4',
      chunkSize: 8 * 1024,
      onProgress: (sent) => progress.push(sent),
    });
    expect(media).toMatchObject({
      kind: 'video',
      mime: 'video/mp4',
      width: 540,
      height: 960,
      duration_ms: 4_000,
    });
    expect(progress.at(-1)).toBe(file.length);
    expect(new Set(progress).size).toBeGreaterThan(3);
    const refused = await api
      .createPost({
        body: { workspace: workspace.id, media: [media.id], targets: ['acc_none'], format: 'reel' },
      })
      .catch((error: unknown) => error);
    expect(refused).toMatchObject({ code: 'validation_error', field: 'targets.0' });
  });
});
