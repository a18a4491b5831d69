import { metaJson, signatureHeaders } from '@svc/graph-sandbox';
import { api, workspaceWithAccounts as connectedWorkspace, eventually, recordEvents } from '@svc/testing';
import { type Stack, startStack } from '@svc/testing/stack';
import sharp from 'sharp';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';

/**
 * Publishing end to end against the graph-sandbox: posts to both networks through the real
 * pipeline (JetStream jobs, the token vault, containers, signed media URLs fetched by the
 * sandbox), outcomes and events, re-publishing only what failed, scheduling, and the checks that
 * refuse a post before anything is sent.
 */
/** The Meta app secret the sandbox signs its webhooks with (its development default). */
const APP_SECRET = 'sandbox-app-secret-0123456789abcdef';
let stack: Stack;
let call: ReturnType<typeof api>;
let key: string;
let recorder: Awaited<ReturnType<typeof recordEvents>>;

interface Published {
  type: string;
  id: string;
  account_id: string;
  caption: string;
  media_type?: string;
}

beforeAll(async () => {
  stack = await startStack({ UNAUTHENTICATED_LIMIT_PER_MINUTE: '100000' });
  // This file polls posts until they settle, far over the default 300 requests a minute (the
  // limit has its own tests in the gateway).
  key = (await stack.system.createPartner(undefined, { limitPerMinute: 100_000 })).key;
  call = api(stack.gateway.url, key);
  recorder = await recordEvents(stack.prefix);
});
afterAll(async () => {
  await recorder.close();
  await stack.stop();
});

/** A workspace with a Page and its Instagram account connected (see @svc/testing). */
const workspaceWithAccounts = () => connectedWorkspace(stack, call);

async function upload(
  workspace: string,
  format: 'jpeg' | 'png' = 'jpeg',
  width = 1080,
  height = 1080,
  orientation = 1,
) {
  const image = sharp({ create: { width, height, channels: 3, background: { r: 200, g: 120, b: 40 } } });
  const bytes = await (format === 'png' ? image.png() : image.jpeg())
    .withMetadata({ orientation })
    .toBuffer();
  const form = new FormData();
  form.append('workspace', workspace);
  form.append('file', new Blob([new Uint8Array(bytes)]), `photo.${format}`);
  const response = await fetch(`${stack.gateway.url}/v1/media`, {
    method: 'POST',
    headers: { authorization: `Bearer ${key}` },
    body: form,
  });
  const body = (await response.json()) as { id: string };
  if (response.status !== 201) throw new Error(`upload: ${response.status} ${JSON.stringify(body)}`);
  return body.id as string;
}

const PUBLISH = 'POST /{id}/media_publish';

/** publishing's Graph calls so far, by endpoint and outcome, from its /metrics. */
async function graphCalls() {
  const text = await (await fetch(`http://127.0.0.1:${stack.publishing.opsPort}/metrics`)).text();
  const lines = text.split('\n').filter((line) => line.startsWith('graph_api_calls_total{'));
  return {
    count: (endpoint: string, outcome: string) =>
      lines
        .filter((line) => line.includes(`endpoint="${endpoint}",outcome="${outcome}"`))
        .reduce((sum, line) => sum + Number(line.slice(line.lastIndexOf(' ') + 1)), 0),
  };
}

async function published(caption: string): Promise<Published[]> {
  const log = await stack.sandboxControl<{ data: Published[] }>('GET', '/__sandbox/published');
  return log.data.filter((p) => p.caption === caption);
}

async function settled(id: string, ms = 15_000) {
  const deadline = Date.now() + ms;
  for (;;) {
    const post = (await call('GET', `/v1/posts/${id}`)).body;
    if (!['publishing', 'scheduled'].includes(post.status) || Date.now() > deadline) return post;
    await new Promise((r) => setTimeout(r, 100));
  }
}

/**
 * Sends until the answer is a 409 or `ms` passed, and answers the last response. For a refusal that
 * depends on an announcement reaching publishing: `ms` stays well under the minute publishing may
 * keep an account, so only the announcement can make it come in time.
 */
async function refusedWithin(ms: number, send: () => ReturnType<typeof call>) {
  const deadline = Date.now() + ms;
  let response = await send();
  while (response.status !== 409 && Date.now() < deadline) {
    await new Promise((r) => setTimeout(r, 100));
    response = await send();
  }
  return response;
}

/** Meta's webhook telling that the user revoked Instagram publishing: the account moves to `error`. */
async function revokePublishPermission(userId: string): Promise<number> {
  const body = metaJson({
    object: 'permissions',
    entry: [
      { id: userId, time: 1, changes: [{ field: 'instagram_content_publish', value: { verb: 'revoked' } }] },
    ],
  });
  const accepted = await fetch(`${stack.gateway.url}/webhooks/meta`, {
    method: 'POST',
    headers: { 'content-type': 'application/json', ...signatureHeaders(APP_SECRET, body) },
    body,
  });
  return accepted.status;
}

describe('publishing', () => {
  // Guarantee: one image to both networks publishes each target once, with platform ids and permalinks, and emits post.published shaped like GET.
  it('publishes an image to a Page and its Instagram account', async () => {
    const { workspace, ig, page } = await workspaceWithAccounts();
    const media = await upload(workspace);
    const caption = 'Fresh bread today #bakery';
    const created = await call('POST', '/v1/posts?wait=true', {
      workspace,
      caption,
      media: [media],
      targets: [ig.id, page.id],
      external_ref: 'cms-1',
    });
    expect(created.status).toBe(201);
    expect(created.body).toMatchObject({
      status: 'published',
      attempts: 1,
      created_by: 'api',
      external_ref: 'cms-1',
    });
    expect(created.body.media).toEqual([
      { id: media, kind: 'image', mime: 'image/jpeg', width: 1080, height: 1080 },
    ]);
    for (const target of created.body.targets) {
      expect(target).toMatchObject({ status: 'published', error: null });
      expect(target.platform_post_id).toBeTruthy();
      expect(target.permalink).toMatch(/^http/);
    }
    expect(created.body.targets.map((t: { account: string }) => t.account)).toEqual([ig.id, page.id]);
    expect(await published(caption)).toHaveLength(2);
    const event = await waitForEvent('post.published', created.body.id);
    expect(event.data.post).toEqual((await call('GET', `/v1/posts/${created.body.id}`)).body);
    const listed = await call('GET', `/v1/posts?workspace=${workspace}&external_ref=cms-1`);
    expect(listed.body.total).toBe(1);
  });

  // Guarantee: a post event's envelope carries the workspace's external_id as it is now, also
  // right after a change (publishing caches workspaces and drops one when identity announces it).
  it('follows a changed external_id in post events', async () => {
    const { workspace, page } = await workspaceWithAccounts();
    const first = await call('POST', '/v1/posts?wait=true', {
      workspace,
      caption: 'one',
      targets: [page.id],
    });
    expect((await waitForEvent('post.published', first.body.id)).external_id).toBeNull();
    expect((await call('PATCH', `/v1/workspaces/${workspace}`, { external_id: 'crm-42' })).status).toBe(200);
    const second = await call('POST', '/v1/posts?wait=true', {
      workspace,
      caption: 'two',
      targets: [page.id],
    });
    expect((await waitForEvent('post.published', second.body.id)).external_id).toBe('crm-42');
  });

  // Guarantee: several images to Instagram become one carousel; PNG is converted to JPEG for Instagram.
  it('publishes a carousel, converting PNG for Instagram', async () => {
    const { workspace, ig } = await workspaceWithAccounts();
    const items = [await upload(workspace), await upload(workspace, 'png')];
    const caption = 'Carousel of the day';
    const post = await call('POST', '/v1/posts?wait=true', {
      workspace,
      caption,
      media: items,
      targets: [ig.id],
    });
    expect(post.body.status).toBe('published');
    const [entry] = await published(caption);
    expect(entry?.media_type).toBe('CAROUSEL_ALBUM');
  });

  // Guarantee: text only is unsupported on the photo network (400 unsupported) but published on a Page.
  it('refuses text only for Instagram and posts it to a Page', async () => {
    const { workspace, ig, page } = await workspaceWithAccounts();
    const refused = await call('POST', '/v1/posts', { workspace, caption: 'Just words', targets: [ig.id] });
    expect(refused.status).toBe(400);
    expect(refused.body.error.code).toBe('unsupported');
    const text = await call('POST', '/v1/posts?wait=true', {
      workspace,
      caption: 'Just words',
      targets: [page.id],
    });
    expect(text.body.status).toBe('published');
  });

  // Guarantee: one failing target makes the post partial with the provider's message; re-publishing retries only that target, so nothing is posted twice.
  it('reports a partial outcome and re-publishes only the failed target', async () => {
    const { workspace, ig, page } = await workspaceWithAccounts();
    const media = await upload(workspace);
    await stack.sandboxControl('POST', '/__sandbox/faults', {
      method: 'POST',
      path: `/${ig.platform_id}/media_publish`,
      times: 1,
      status: 400,
      error: { code: 9, message: 'Application request limit reached', error_subcode: 2207042 },
    });
    const caption = 'Partial day';
    const first = await call('POST', '/v1/posts?wait=true', {
      workspace,
      caption,
      media: [media],
      targets: [ig.id, page.id],
    });
    expect(first.body.status).toBe('partial');
    const failed = first.body.targets.find((t: { account: string }) => t.account === ig.id);
    expect(failed).toMatchObject({ status: 'failed', platform_post_id: null });
    expect(failed.error).toContain('Application request limit reached');
    expect(first.body.last_error).toMatch(/^photo_network: .*Application request limit reached/);
    await waitForEvent('post.partial', first.body.id);

    const patched = await call('PATCH', `/v1/posts/${first.body.id}`, { caption });
    expect(patched.status).toBe(200);
    const again = await call('POST', `/v1/posts/${first.body.id}/publish?wait=true`);
    expect(again.status).toBe(200);
    expect(again.body).toMatchObject({ status: 'published', attempts: 2, last_error: null });
    const log = await published(caption);
    expect(log.filter((p) => p.account_id === page.platform_id)).toHaveLength(1);
    expect(log.filter((p) => p.account_id === ig.platform_id)).toHaveLength(1);
    const conflict = await call('PATCH', `/v1/posts/${first.body.id}`, { caption: 'late edit' });
    expect(conflict.status).toBe(409);
    expect(conflict.body.error.code).toBe('conflict');
  });

  // Guarantee: an Instagram image is published without asking its container's status first (one
  // Graph call less: container, media_publish, permalink), and a container Meta has not finished
  // (media_publish refused with 9007/2207027) is waited for and published once.
  it('publishes an image at once, and waits for a container Meta has not finished', async () => {
    const { workspace, ig } = await workspaceWithAccounts();
    const post = (caption: string, media: string) =>
      call('POST', '/v1/posts?wait=true', { workspace, caption, media: [media], targets: [ig.id] });
    const before = await graphCalls();
    expect((await post('ready at once', await upload(workspace))).body.status).toBe('published');
    const atOnce = await graphCalls();
    expect(atOnce.count('GET /{id}', 'ok') - before.count('GET /{id}', 'ok')).toBe(1);
    expect(atOnce.count(PUBLISH, 'ok') - before.count(PUBLISH, 'ok')).toBe(1);
    expect(atOnce.count(PUBLISH, 'media')).toBe(before.count(PUBLISH, 'media'));

    await stack.sandboxControl('POST', '/__sandbox/config', { image_processing_ms: 1_500 });
    try {
      expect((await post('ready later', await upload(workspace))).body.status).toBe('published');
    } finally {
      await stack.sandboxControl('POST', '/__sandbox/config', { image_processing_ms: null });
    }
    const later = await graphCalls();
    expect(later.count(PUBLISH, 'media') - atOnce.count(PUBLISH, 'media')).toBe(1);
    expect(later.count(PUBLISH, 'ok') - atOnce.count(PUBLISH, 'ok')).toBe(1);
    expect(await published('ready later')).toHaveLength(1);
  });

  // Guarantee: an image container that failed processing, published without asking first, fails
  // its target with Meta's processing code and the media item (read from the container's status
  // once media_publish is refused); nothing is published.
  it('fails an image whose container failed processing with the code and the item', async () => {
    const { workspace, ig } = await workspaceWithAccounts();
    const media = await upload(workspace);
    // POST only: a read of the account's media (an import, an adoption lookup) must not take the fault.
    await stack.sandboxControl('POST', '/__sandbox/faults', {
      method: 'POST',
      path: `/${ig.platform_id}/media`,
      processing_error: 2207026,
    });
    const post = await call('POST', '/v1/posts?wait=true', {
      workspace,
      caption: 'failed processing',
      media: [media],
      targets: [ig.id],
    });
    expect(post.body.status).toBe('failed');
    expect(post.body.targets[0].error).toMatch(new RegExp(`media item 1 \\(${media}\\).*2207026`));
    expect(await published('failed processing')).toEqual([]);
  });

  // Guarantee: a carousel refusal names the media item and gives the provider's reason.
  it('attributes a carousel refusal to its media item', async () => {
    const { workspace, ig } = await workspaceWithAccounts();
    const items = [await upload(workspace), await upload(workspace)];
    await stack.sandboxControl('POST', '/__sandbox/faults', {
      method: 'POST',
      path: `/${ig.platform_id}/media`,
      times: 1,
      status: 400,
      error: { code: 36001, message: 'The image format is not supported.', error_subcode: 2207005 },
    });
    const post = await call('POST', '/v1/posts?wait=true', {
      workspace,
      caption: 'c',
      media: items,
      targets: [ig.id],
    });
    expect(post.body.status).toBe('failed');
    expect(post.body.targets[0].error).toContain(`media item 1 (${items[0]})`);
    expect(post.body.targets[0].error).toContain('The image format is not supported.');
  });

  // Guarantee: a scheduled post starts at schedule_at (within 5 s); a draft waits for publish.
  it('publishes scheduled posts on time and drafts on demand', async () => {
    const { workspace, page } = await workspaceWithAccounts();
    const at = new Date(Date.now() + 1500).toISOString();
    const scheduled = await call('POST', '/v1/posts', {
      workspace,
      caption: 'Later',
      targets: [page.id],
      schedule_at: at,
    });
    expect(scheduled.body).toMatchObject({ status: 'scheduled', schedule_at: at, attempts: 0 });
    const done = await settled(scheduled.body.id, 8000);
    expect(done.status).toBe('published');
    expect(Date.parse(done.published_at)).toBeGreaterThanOrEqual(Date.parse(at));

    const draft = await call('POST', '/v1/posts', {
      workspace,
      caption: 'Draft',
      targets: [page.id],
      draft: true,
    });
    expect(draft.body.status).toBe('draft');
    await new Promise((r) => setTimeout(r, 1200));
    expect((await call('GET', `/v1/posts/${draft.body.id}`)).body.status).toBe('draft');
    const go = await call('POST', `/v1/posts/${draft.body.id}/publish?wait=true`);
    expect(go.body.status).toBe('published');
  });

  // Guarantee: a page of posts and its total are one moment's view, also while posts are created:
  // a client reading pages until they add up to the total never waits on a post it cannot get.
  it('answers a total that agrees with its page while posts are created', async () => {
    const { workspace, page } = await workspaceWithAccounts();
    const count = 120;
    let created = 0;
    const creating = (async () => {
      for (; created < count; created++) {
        const draft = { workspace, caption: `Draft ${created}`, targets: [page.id], draft: true };
        expect((await call('POST', '/v1/posts', draft)).status).toBe(201);
      }
    })();
    const disagreements: string[] = [];
    let total = 0;
    for (let reads = 0; (created < count || total < count) && reads < 2_000; reads++) {
      const listed = (await call('GET', `/v1/posts?workspace=${workspace}&limit=200`)).body;
      total = listed.total;
      if (listed.data.length !== listed.total)
        disagreements.push(`${listed.data.length} listed, total ${listed.total}`);
    }
    await creating;
    expect(total).toBe(count);
    expect(disagreements).toEqual([]);
  });

  // Guarantee: a scheduled post whose account was disconnected meanwhile fails for that target,
  // also right after a publish to that account (workers keep tokens, and drop one on
  // account.disconnected).
  it('fails a scheduled target whose account was disconnected', async () => {
    const { workspace, ig, page } = await workspaceWithAccounts();
    const media = await upload(workspace);
    const before = await call('POST', '/v1/posts?wait=true', {
      workspace,
      caption: 'Before the disconnect',
      media: [media],
      targets: [ig.id],
    });
    expect(before.body.status).toBe('published');
    const at = new Date(Date.now() + 1500).toISOString();
    const post = await call('POST', '/v1/posts', {
      workspace,
      caption: 'S',
      media: [media],
      targets: [ig.id, page.id],
      schedule_at: at,
    });
    expect((await call('DELETE', `/v1/accounts/${ig.id}`)).status).toBe(204);
    const done = await settled(post.body.id, 8000);
    expect(done.status).toBe('partial');
    expect(done.targets[0]).toMatchObject({ account: ig.id, status: 'failed' });
    expect(done.targets[0].error).toContain('disconnected');
  });
});

describe('an account that left active after the post was created', () => {
  type Accounts = Awaited<ReturnType<typeof workspaceWithAccounts>>;
  // Guarantee: a scheduled target whose account became expired, revoked or error after the post was
  // created fails at publish time with the account's reason, and nothing is sent to the network
  // with its token (accounts hands out no token of an account that is not active). Each account
  // leaves active the way it does in production: a network call finds the token expired (refresh),
  // the user removes the app (deauthorize callback), the user revokes a permission (Meta webhook).
  it.each([
    [
      'expired',
      'page',
      async ({ user, page }: Accounts) => {
        await stack.sandboxControl('POST', `/__sandbox/users/${user.user.id}/expire-tokens`);
        expect((await call('POST', `/v1/accounts/${page.id}/refresh`)).status).toBe(502);
      },
    ],
    [
      'revoked',
      'page',
      async ({ user }: Accounts) => {
        await stack.sandboxControl('POST', `/__sandbox/users/${user.user.id}/deauthorize`);
      },
    ],
    [
      'error',
      'ig',
      async ({ user }: Accounts) => {
        expect(await revokePublishPermission(user.user.id)).toBe(200);
      },
    ],
  ] as const)(
    'fails the target of an account now %s without calling the network',
    async (status, which, leave) => {
      const accounts = await workspaceWithAccounts();
      const account = accounts[which];
      const caption = `Scheduled for an account now ${status}`;
      const at = Date.now() + 4000;
      const post = await call('POST', '/v1/posts', {
        workspace: accounts.workspace,
        caption,
        media: which === 'ig' ? [await upload(accounts.workspace)] : [],
        targets: [account.id],
        schedule_at: new Date(at).toISOString(),
      });
      expect(post.status).toBe(201);
      await leave(accounts);
      await eventually(async () => {
        const read = await call('GET', `/v1/accounts/${account.id}`);
        return read.body.status === status ? true : undefined;
      });
      expect(Date.now(), 'the account left active before the post was due').toBeLessThan(at);
      // Any write the publish job sent to the network would meet this fault (and use it up).
      await stack.sandboxControl('POST', '/__sandbox/faults', {
        method: 'POST',
        path: '/*/*',
        error: { code: 2, message: 'the network was called' },
      });
      const done = await settled(post.body.id, 12_000);
      const { cleared } = await stack.sandboxControl<{ cleared: number }>('DELETE', '/__sandbox/faults');
      expect(cleared, 'no call reached the network').toBe(1);
      expect(done.status).toBe('failed');
      expect(done.targets[0]).toMatchObject({ account: account.id, status: 'failed' });
      expect(done.targets[0].error).toContain(`is ${status}`);
      expect(await published(caption)).toHaveLength(0);
    },
  );
});

describe('a token the network refuses', () => {
  // Guarantee: a target refused for its token fails with the provider's message, and the account
  // moves to expired through accounts, also when the worker kept that token from an earlier
  // publish (a kept token is reported only while accounts still holds the same one).
  it('fails the target and moves the account to expired', async () => {
    const { workspace, page } = await workspaceWithAccounts();
    const first = await call('POST', '/v1/posts?wait=true', {
      workspace,
      caption: 'Token kept',
      targets: [page.id],
    });
    expect(first.body.status).toBe('published');
    await stack.sandboxControl('POST', '/__sandbox/faults', {
      method: 'POST',
      path: `/${page.platform_id}/feed`,
      times: 1,
      status: 400,
      error: {
        code: 190,
        error_subcode: 463,
        type: 'OAuthException',
        message: 'Error validating access token: Session has expired',
      },
    });
    const refused = await call('POST', '/v1/posts?wait=true', {
      workspace,
      caption: 'Token refused',
      targets: [page.id],
    });
    expect(refused.body.status).toBe('failed');
    expect(refused.body.targets[0].error).toContain('Session has expired');
    expect((await call('GET', `/v1/accounts/${page.id}`)).body.status).toBe('expired');
  });
});

describe('idempotency', () => {
  // Guarantee: a retried create with the same Idempotency-Key and body returns the same post and posts nothing twice; another body under the key is 409.
  it('answers a retry with the same post and refuses a different body', async () => {
    const { workspace, page } = await workspaceWithAccounts();
    const body = { workspace, caption: 'Once only', targets: [page.id] };
    const headers = { 'idempotency-key': `retry-${workspace}` };
    const first = await call('POST', '/v1/posts?wait=true', body, headers);
    const again = await call('POST', '/v1/posts?wait=true', body, headers);
    expect(first.status).toBe(201);
    expect(again.status).toBe(201);
    expect(again.body.id).toBe(first.body.id);
    expect(again.headers.get('idempotent-replayed')).toBe('true');
    expect(first.headers.get('idempotent-replayed')).toBeNull();
    expect(await published('Once only')).toHaveLength(1);
    const different = await call('POST', '/v1/posts', { ...body, caption: 'Other' }, headers);
    expect(different.status).toBe(409);
    expect(different.body.error.code).toBe('conflict');
    const bad = await call('POST', '/v1/posts', body, { 'idempotency-key': 'has space' });
    expect(bad.body.error).toMatchObject({ code: 'validation_error', field: 'Idempotency-Key' });
  });
});

describe('first comment', () => {
  // Guarantee: options.first_comment is posted under each published target; its failure is reported on the target without failing the post.
  it('posts the first comment, and reports its failure on the target', async () => {
    const { workspace, ig, page } = await workspaceWithAccounts();
    const media = await upload(workspace);
    const options = { first_comment: 'Order at acme.example' };
    const ok = await call('POST', '/v1/posts?wait=true', {
      workspace,
      caption: 'fc',
      media: [media],
      targets: [ig.id, page.id],
      options,
    });
    expect(ok.body).toMatchObject({ status: 'published', options });
    expect(ok.body.targets.map((t: { first_comment_error: string | null }) => t.first_comment_error)).toEqual(
      [null, null],
    );
    const sent = await stack.sandboxControl<{ data: { type: string; text: string; object_id: string }[] }>(
      'GET',
      '/__sandbox/sent',
    );
    const comments = sent.data.filter((e) => e.text === options.first_comment);
    expect(comments.map((c) => c.object_id).sort()).toEqual(
      ok.body.targets.map((t: { platform_post_id: string }) => t.platform_post_id).sort(),
    );

    await stack.sandboxControl('POST', '/__sandbox/faults', {
      method: 'POST',
      path: '/*/comments',
      times: 2,
      status: 400,
      error: { code: 100, message: 'Comments are turned off for this post' },
    });
    const failing = await call('POST', '/v1/posts?wait=true', {
      workspace,
      caption: 'fc2',
      media: [media],
      targets: [ig.id],
      options,
    });
    expect(failing.body.status).toBe('published');
    expect(failing.body.targets[0].first_comment_error).toContain('Comments are turned off');
    await stack.sandboxControl('DELETE', '/__sandbox/faults');
  });
});

describe('checks before sending', () => {
  // Guarantee: a target whose account left `active` without a partner event (the network revoked
  // a permission: status error) is refused with 409 account_disconnected within moments, also
  // right after a post to it (publishing keeps accounts, and drops one on accounts.changed).
  it('refuses an account moved to error right after a post to it', async () => {
    const { workspace, user, ig } = await workspaceWithAccounts();
    const media = await upload(workspace);
    const post = { workspace, caption: 'Before the revocation', media: [media], targets: [ig.id] };
    expect((await call('POST', '/v1/posts', post)).status).toBe(201);
    expect(await revokePublishPermission(user.user.id)).toBe(200);
    const refused = await refusedWithin(5_000, () =>
      call('POST', '/v1/posts', { ...post, caption: 'After the revocation' }),
    );
    expect(refused.status).toBe(409);
    expect(refused.body.error.code).toBe('account_disconnected');
  });

  // Guarantee: every refusal names the field (the aspect ratio judged on the photo as it is shown,
  // EXIF orientation applied), and a disconnected target is 409 account_disconnected.
  it('refuses invalid posts with the precise error', async () => {
    const { workspace, ig, page } = await workspaceWithAccounts();
    const other = await workspaceWithAccounts();
    const media = await upload(workspace);
    const tall = await upload(workspace, 'jpeg', 500, 1000);
    const post = (body: Record<string, unknown>) => call('POST', '/v1/posts', { workspace, ...body });
    const long = await post({ caption: 'x'.repeat(2201), media: [media], targets: [ig.id] });
    expect(long.body.error).toMatchObject({ code: 'validation_error', field: 'caption' });
    const tags = await post({
      caption: Array.from({ length: 31 }, (_, i) => `#t${i}`).join(' '),
      media: [media],
      targets: [ig.id],
    });
    expect(tags.body.error).toMatchObject({ code: 'validation_error', field: 'caption' });
    const ratio = await post({ caption: 'tall', media: [tall], targets: [ig.id] });
    expect(ratio.body.error).toMatchObject({ code: 'validation_error', field: 'media.0' });
    // A portrait phone photo: landscape pixels (1000×600, a ratio Instagram takes) that EXIF
    // orientation 6 shows as 600×1000 (a ratio it refuses).
    const phone = await upload(workspace, 'jpeg', 1000, 600, 6);
    const turned = await post({ caption: 'phone', media: [phone], targets: [ig.id] });
    expect(turned.body.error).toMatchObject({ code: 'validation_error', field: 'media.0' });
    expect(turned.body.error.message).toContain('600×1000');
    const foreignMedia = await post({
      caption: 'x',
      media: [await upload(other.workspace)],
      targets: [page.id],
    });
    expect(foreignMedia.body.error).toMatchObject({ code: 'validation_error', field: 'media.0' });
    const foreignTarget = await post({ caption: 'x', targets: [other.page.id] });
    expect(foreignTarget.body.error).toMatchObject({ code: 'validation_error', field: 'targets.0' });
    const none = await post({ caption: 'x', targets: [] });
    expect(none.body.error).toMatchObject({ code: 'validation_error', field: 'targets' });
    // The page's token expires (the sweeper moves it and announces account.expired); publishing
    // kept the account from the post above and must drop it.
    await stack.accounts.pool.query(
      `UPDATE accounts SET token_expires_at = now() + interval '1 hour' WHERE id = $1`,
      [page.id],
    );
    // The sweep runs in an accounts replica whose clock is two hours ahead (accounts' own sweeper,
    // started as accounts starts, rather than a call into its internals).
    const ahead = await stack.system.start('accounts', {
      env: { EXPIRY_SWEEP_MS: '100' },
      options: { accounts: { now: () => new Date(Date.now() + 2 * 3600_000) } },
    });
    await eventually(async () => {
      const { rows } = await stack.accounts.pool.query('SELECT status FROM accounts WHERE id = $1', [
        page.id,
      ]);
      return rows[0]?.status === 'expired' ? true : undefined;
    });
    await stack.system.stopInstance(ahead);
    const disconnected = await refusedWithin(5_000, () => post({ caption: 'x', targets: [page.id] }));
    expect(disconnected.status).toBe(409);
    expect(disconnected.body.error.code).toBe('account_disconnected');
  });

  // Guarantee: a dry run checks everything a create checks and answers what would be sent, creating nothing.
  it('answers a dry run without creating anything', async () => {
    const { workspace, ig, page } = await workspaceWithAccounts();
    const jpeg = await upload(workspace);
    const png = await upload(workspace, 'png');
    const body = { workspace, caption: 'Preview', media: [jpeg, png], targets: [ig.id, page.id] };
    const dry = await call('POST', '/v1/posts?dry_run=true', body);
    expect(dry.status).toBe(200);
    expect(dry.body).toMatchObject({ dry_run: true, workspace, status: 'publishing' });
    expect(dry.body.targets.map((t: { would_send: { kind: string } }) => t.would_send.kind)).toEqual([
      'carousel',
      'multi_photo',
    ]);
    expect(dry.body.targets[0].would_send.converted_to_jpeg).toEqual([png]);
    expect((await call('GET', `/v1/posts?workspace=${workspace}`)).body.total).toBe(0);
    const refused = await call('POST', '/v1/posts?dry_run=true', {
      workspace,
      caption: 'words',
      targets: [ig.id],
    });
    expect(refused.body.error.code).toBe('unsupported');
    expect(await published('Preview')).toHaveLength(0);
  });

  // Guarantee: the Instagram daily limit (100 per 24 h) fails the target before calling the network.
  it('fails a target over the daily publishing limit', async () => {
    const { workspace, ig } = await workspaceWithAccounts();
    const media = await upload(workspace);
    const first = await call('POST', '/v1/posts?wait=true', {
      workspace,
      caption: 'one',
      media: [media],
      targets: [ig.id],
    });
    // 99 more published posts of this account in the last 24 h (copies of the first).
    await stack.publishing.pool.query(
      `INSERT INTO posts (id, partner_id, workspace_id, caption, media_ids, media, status, attempts, created_by, options, created_at, updated_at)
       SELECT id || '_' || n, partner_id, workspace_id, caption, media_ids, media, 'published', 1, created_by, options, now(), now()
       FROM posts, generate_series(1, 99) n WHERE id = $1`,
      [first.body.id],
    );
    await stack.publishing.pool.query(
      `INSERT INTO post_targets (post_id, account_id, position, network, username, status, published_at, updated_at)
       SELECT $1 || '_' || n, $2, 0, 'photo_network', 'acme', 'published', now(), now() FROM generate_series(1, 99) n`,
      [first.body.id, ig.id],
    );
    const caption = 'one too many';
    const over = await call('POST', '/v1/posts?wait=true', {
      workspace,
      caption,
      media: [media],
      targets: [ig.id],
    });
    expect(over.body.status).toBe('failed');
    expect(over.body.targets[0].error).toContain('daily publishing limit');
    expect(await published(caption)).toHaveLength(0);
    const limit = await call('GET', `/v1/accounts/${ig.id}/publishing-limit`);
    expect(limit.body).toMatchObject({ limit: 100, used: 100, remaining: 0, window_hours: 24 });
    expect(Date.parse(limit.body.next_slot_at)).toBeGreaterThan(Date.now() + 23 * 3600_000);
  });

  // Guarantee: deleting the workspace removes its posts, media records and files.
  it('purges posts and media with the workspace', async () => {
    const { workspace, page } = await workspaceWithAccounts();
    const media = await upload(workspace);
    await call('POST', '/v1/posts?wait=true', {
      workspace,
      caption: 'bye',
      media: [media],
      targets: [page.id],
    });
    expect((await call('DELETE', `/v1/workspaces/${workspace}`)).status).toBe(204);
    const deadline = Date.now() + 5000;
    const count = async (table: string) =>
      Number(
        (
          await stack.publishing.pool.query(`SELECT count(*) FROM ${table} WHERE workspace_id = $1`, [
            workspace,
          ])
        ).rows[0].count,
      );
    while ((await count('posts')) + (await count('media')) > 0 && Date.now() < deadline)
      await new Promise((r) => setTimeout(r, 100));
    expect(await count('posts')).toBe(0);
    expect(await count('media')).toBe(0);
    const { readdir } = await import('node:fs/promises');
    const files = await readdir(stack.mediaDir, { recursive: true });
    expect(files.filter((f) => String(f).includes(media))).toEqual([]);
  });
});

async function waitForEvent(type: string, postId: string) {
  const deadline = Date.now() + 5000;
  for (;;) {
    const event = recorder.ofType(type).find((e) => (e.data.post as { id: string }).id === postId);
    if (event || Date.now() > deadline) {
      if (!event) throw new Error(`no ${type} for ${postId}`);
      return event;
    }
    await new Promise((r) => setTimeout(r, 50));
  }
}
