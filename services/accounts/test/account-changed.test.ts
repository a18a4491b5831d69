import { metaJson, signatureHeaders } from '@svc/graph-sandbox';
import type { api } from '@svc/testing';
import { connectThroughLink, createUser, eventually, newLink, Receiver, trackedApi } from '@svc/testing';
import { type Stack, startStack } from '@svc/testing/stack';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';

/**
 * `account.changed` as a partner sees it: an account that drops to `error` (a permission revoked at
 * Meta, a refresh the network refuses for good) or comes back from it is announced by webhook and
 * listed by `GET /v1/events`, with the account's status, `last_error` and the status it left.
 */
const APP_SECRET = 'sandbox-app-secret-0123456789abcdef';
let stack: Stack;
let call: ReturnType<typeof api>;
let receiver: Receiver;

beforeAll(async () => {
  stack = await startStack({ UNAUTHENTICATED_LIMIT_PER_MINUTE: '100000' });
  call = trackedApi(stack.gateway.url, (await stack.createPartner()).key);
  receiver = await Receiver.start();
  expect((await call('PUT', '/v1/webhook', { url: receiver.url })).status).toBe(200);
});
afterAll(async () => {
  await receiver?.close();
  await stack?.stop();
});

interface ChangedEvent {
  id: string;
  type: string;
  workspace: string;
  data: {
    previous_status: string;
    account: { id: string; status: string; last_error: string | null; scopes: string[] };
  };
}

async function connected() {
  const user = await createUser(stack, [{ name: 'Corner Shop', instagram: { username: 'corner' } }]);
  const { url, workspaceId } = await newLink(call);
  await connectThroughLink(stack, url, 'page_network', { userId: user.user.id, decision: 'approve' });
  const accounts = (await call('GET', `/v1/workspaces/${workspaceId}/accounts`)).body.data as {
    id: string;
    network: string;
    platform_id: string;
  }[];
  const ig = accounts.find((a) => a.network === 'photo_network');
  const page = accounts.find((a) => a.network === 'page_network');
  if (!ig || !page) throw new Error('not connected');
  return { user, workspaceId, ig, page };
}

/** Meta's `permissions` webhook for one permission of a user, signed with the app secret. */
async function permission(userId: string, field: string, verb: 'revoked' | 'granted') {
  const body = metaJson({
    object: 'permissions',
    entry: [{ id: userId, time: 1, changes: [{ field, value: { verb } }] }],
  });
  const answer = await fetch(`${stack.gateway.url}/webhooks/meta`, {
    method: 'POST',
    headers: { 'content-type': 'application/json', ...signatureHeaders(APP_SECRET, body) },
    body,
  });
  expect(answer.status).toBe(200);
}

/** The account.changed events of an account, as `GET /v1/events` lists them (oldest first). */
async function listed(workspace: string, accountId: string): Promise<ChangedEvent[]> {
  const page = await call('GET', `/v1/events?type=account.changed&workspace=${workspace}`);
  expect(page.status).toBe(200);
  return (page.body.data as ChangedEvent[]).filter((e) => e.data.account.id === accountId);
}

/** The account.changed webhook deliveries of an account. */
const delivered = (accountId: string) =>
  receiver.requests
    .filter((r) => r.headers['x-service-event'] === 'account.changed')
    .map((r) => JSON.parse(r.body) as ChangedEvent)
    .filter((e) => e.data.account.id === accountId);

describe('account.changed', () => {
  // Guarantee: a permission revoked at Meta that puts the account in error reaches the partner as
  // one account.changed (webhook and GET /v1/events) carrying status error, last_error and
  // previous_status active; Meta repeating the webhook announces nothing more; the permission
  // granted again announces the way back to active.
  it('announces a drop to error and the way back, once each', async () => {
    const { user, workspaceId, ig } = await connected();
    await permission(user.user.id, 'instagram_content_publish', 'revoked');
    const [dropped] = await eventually(async () => {
      const events = await listed(workspaceId, ig.id);
      expect(events).toHaveLength(1);
      return events;
    });
    expect(dropped).toMatchObject({
      type: 'account.changed',
      workspace: workspaceId,
      data: { previous_status: 'active', account: { id: ig.id, status: 'error' } },
    });
    expect(dropped?.data.account.last_error).toContain('instagram_content_publish');
    expect(dropped?.data.account.scopes).not.toContain('instagram_content_publish');
    await eventually(() => delivered(ig.id).length > 0 || undefined);
    expect(delivered(ig.id).map((e) => e.id)).toEqual([dropped?.id]);

    // Meta delivers the same webhook again: the account is already in that state.
    await permission(user.user.id, 'instagram_content_publish', 'revoked');
    await permission(user.user.id, 'instagram_content_publish', 'granted');
    const events = await eventually(async () => {
      const all = await listed(workspaceId, ig.id);
      expect(all).toHaveLength(2);
      return all;
    });
    expect(events[1]?.data).toMatchObject({
      previous_status: 'error',
      account: { id: ig.id, status: 'active', last_error: null },
    });
    await eventually(() => delivered(ig.id).length === 2 || undefined);
  });

  // Guarantee: a refresh the network refuses with a token error that is neither expiry nor
  // revocation moves the account to error and tells the partner so with account.changed.
  it('announces a refresh that fails for good', async () => {
    const { workspaceId, page } = await connected();
    await stack.sandboxControl('POST', '/__sandbox/faults', {
      method: 'GET',
      path: `/${page.platform_id}`,
      times: 1,
      status: 400,
      error: {
        code: 190,
        message: 'Error validating access token: the session is invalid.',
        error_subcode: 0,
      },
    });
    const refresh = await call('POST', `/v1/accounts/${page.id}/refresh`);
    expect(refresh.status).toBe(502);
    expect((await call('GET', `/v1/accounts/${page.id}`)).body.status).toBe('error');
    const [changed] = await eventually(async () => {
      const events = await listed(workspaceId, page.id);
      expect(events).toHaveLength(1);
      return events;
    });
    expect(changed?.data).toMatchObject({ previous_status: 'active', account: { status: 'error' } });
    expect(changed?.data.account.last_error).toContain('the session is invalid');
    await eventually(() => delivered(page.id).length === 1 || undefined);
  });
});
