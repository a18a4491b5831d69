import type { ConversationView } from '@svc/contracts/public';
import { eventually } from '@svc/testing';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { type Connected, connectedWorkspace, type InboxHarness } from './harness.ts';
import { eventsAbout, messagesOf, settle, startTunedInbox } from './tuned-system.ts';

/**
 * The periodic reconciliation against the sandbox over HTTP: messages, comments and answers from
 * the network's own app whose webhooks the sandbox withholds (Meta never delivered them) are
 * stored and announced to the partner (GET /v1/events) without anyone asking, once, even when
 * the webhook comes late. Here every account is reconciled every 1.5 s, at 2 calls/s.
 */
const INTERVAL_MS = 1_500;
const CALLS_PER_SECOND = 2;
let h: InboxHarness;
let w: Connected;

beforeAll(async () => {
  h = await startTunedInbox({
    inboxEnv: {
      INBOX_RECONCILE_INTERVAL_MS: String(INTERVAL_MS),
      INBOX_RECONCILE_CALLS_PER_SECOND: String(CALLS_PER_SECOND),
      // Every reconciliation's line (calls made, time taken), quiet ones included.
      LOG_LEVEL: 'debug',
    },
  });
  w = await connectedWorkspace(h, 'Reconciled');
  // What follows must come after the import on connect, which would otherwise read it: only the
  // reconciliation may bring it. The network's times are whole seconds, hence the second's wait.
  for (const account of [w.ig.id, w.page.id])
    await eventually(() =>
      h.system.logs.find((l) => l.msg === 'inbox history imported' && l.account === account),
    );
  await settle(1_100);
}, 120_000);
afterAll(() => h.stop());

type Delivered = { message_id: string; sender_id: string; webhook: { id: string; error: string | null } };

const withhold = (accountId: string, kind: 'message' | 'echo' | 'comment') =>
  h.system.sandboxControl('POST', '/__sandbox/webhooks/withhold', { account_id: accountId, kind });
const replay = (webhookId: string) =>
  h.system.sandboxControl('POST', `/__sandbox/webhooks/${webhookId}/replay`, { times: 1 });

/** The one event the partner sees about a network message, once it is there. */
async function oneEvent(workspace: string, type: string, platformId: string) {
  const [event, ...more] = await eventually(async () => {
    const found = await eventsAbout(h, workspace, type, platformId);
    return found.length > 0 ? found : undefined;
  }, 20_000);
  expect(more).toEqual([]);
  return event as NonNullable<typeof event>;
}

/** The reconciliations logged: account, calls made, how long each took, when it ended. */
const sweeps = () =>
  h.system.logs
    .filter((l) => l.msg === 'inbox reconciled')
    .map((l) => ({
      account: l.account as string,
      calls: l.calls as number,
      ms: l.ms as number,
      end: Date.parse(l.time as string),
    }));

describe('messages whose webhooks never came', () => {
  // Guarantee: a DM whose webhook Meta never delivered is stored and announced with
  // message.received by the reconciliation, without inbox-sync or any other call; its webhook
  // delivered late afterwards records and announces nothing more.
  it('brings a DM, announced once', async () => {
    await withhold(w.ig.platform_id, 'message');
    const text = 'hello? is anyone reading these?';
    const dm = await h.system.sandboxControl<Delivered>(
      'POST',
      `/__sandbox/instagram/${w.ig.platform_id}/messages`,
      {
        from: { username: 'never_webhooked' },
        text,
      },
    );
    expect(dm.webhook.error).toBe('withheld');
    const event = await oneEvent(w.workspace, 'message.received', dm.message_id);
    expect(event.data.message).toMatchObject({ direction: 'inbound', kind: 'message', text });
    expect(event.data.conversation).toMatchObject({ account: w.ig.id, unread_count: 1 });

    await replay(dm.webhook.id);
    await settle(INTERVAL_MS * 2);
    expect(await eventsAbout(h, w.workspace, 'message.received', dm.message_id)).toHaveLength(1);
    expect((await messagesOf(h, event.data.conversation.id)).map((m) => m.platform_message_id)).toEqual([
      dm.message_id,
    ]);
  });

  // Guarantee: a comment on our post whose webhook never came is brought with comment.received in
  // the post's thread, and an answer written in the network's own app whose echo never came with
  // message.sent (outbound, from the account).
  it('brings a comment and an answer from the network app', async () => {
    const post = await h.call('POST', '/v1/posts?wait=true', {
      workspace: w.workspace,
      caption: 'Reconciled bread',
      targets: [w.page.id],
    });
    expect(post.body.status).toBe('published');
    const objectId = post.body.targets[0].platform_post_id as string;
    await withhold(w.page.platform_id, 'comment');
    const comment = await h.system.sandboxControl<{ id: string; webhook: { error: string | null } }>(
      'POST',
      `/__sandbox/pages/posts/${objectId}/comments`,
      { from: { name: 'Quiet Commenter' }, text: 'Gluten free?' },
    );
    expect(comment.webhook.error).toBe('withheld');
    const received = await oneEvent(w.workspace, 'comment.received', comment.id);
    expect(received.data.conversation).toMatchObject({
      kind: 'comments',
      object: { id: objectId, post: post.body.id },
    });
    expect(received.data.message).toMatchObject({ kind: 'comment', text: 'Gluten free?' });

    const dm = await h.system.sandboxControl<Delivered>(
      'POST',
      `/__sandbox/pages/${w.page.platform_id}/messages`,
      {
        from: { name: 'Gets An Answer' },
        text: 'open on Sunday?',
      },
    );
    await oneEvent(w.workspace, 'message.received', dm.message_id);
    await withhold(w.page.platform_id, 'echo');
    const answer = await h.system.sandboxControl<Delivered>(
      'POST',
      `/__sandbox/pages/${w.page.platform_id}/app-messages`,
      { to: { id: dm.sender_id }, text: 'yes, 9 to 1' },
    );
    expect(answer.webhook.error).toBe('withheld');
    const sent = await oneEvent(w.workspace, 'message.sent', answer.message_id);
    expect(sent.data.message).toMatchObject({
      direction: 'outbound',
      source: 'network',
      text: 'yes, 9 to 1',
      from: { id: w.page.platform_id },
    });
  });

  // Guarantee: a permission of the account dropped at Meta without a word (its DMs can no longer
  // be read) does not stop the rest of the account from being reconciled: a comment whose webhook
  // never came still arrives.
  it('goes on with the comments when the DMs are refused', async () => {
    const other = await connectedWorkspace(h, 'Half Readable');
    await h.system.sandboxControl(
      'DELETE',
      `/__sandbox/users/${other.user.user.id}/permissions/pages_messaging?webhook=false`,
    );
    const post = await h.call('POST', '/v1/posts?wait=true', {
      workspace: other.workspace,
      caption: 'Still open',
      targets: [other.page.id],
    });
    const objectId = post.body.targets[0].platform_post_id as string;
    await withhold(other.page.platform_id, 'comment');
    const comment = await h.system.sandboxControl<{ id: string }>(
      'POST',
      `/__sandbox/pages/posts/${objectId}/comments`,
      {
        from: { name: 'Still Here' },
        text: 'Do you deliver?',
      },
    );
    await oneEvent(other.workspace, 'comment.received', comment.id);
    const refused = h.system.logs.find(
      (l) => l.msg === 'reconciliation: part of the account could not be read' && l.account === other.page.id,
    );
    expect(refused).toBeDefined();
  });
});

describe('the pace of the reconciliation', () => {
  // Guarantee: with two replicas, an account is reconciled by one at a time (no two sweeps of it
  // overlap) about once per interval, not once per replica; every sweep spaces its network calls
  // at no more than 2 per second.
  it('sweeps each account once per interval across replicas, within the rate', async () => {
    const second = await h.system.start('inbox', { label: 'inbox-2' });
    try {
      const from = Date.now();
      await settle(INTERVAL_MS * 5);
      const window = sweeps().filter((s) => s.end - s.ms >= from);
      const byAccount = new Map<string, typeof window>();
      for (const s of window) byAccount.set(s.account, [...(byAccount.get(s.account) ?? []), s]);
      expect(byAccount.get(w.ig.id)?.length).toBeGreaterThanOrEqual(2);
      for (const [, list] of byAccount) {
        // One interval less a tenth between claims, and a sweep longer than that only delays the next.
        expect(list.length).toBeLessThanOrEqual(Math.ceil((INTERVAL_MS * 5) / (INTERVAL_MS * 0.9)) + 1);
        const spans = list.map((s) => [s.end - s.ms, s.end]).sort((a, b) => (a[0] ?? 0) - (b[0] ?? 0));
        for (let i = 1; i < spans.length; i++)
          expect(spans[i]?.[0]).toBeGreaterThanOrEqual(spans[i - 1]?.[1] ?? 0);
      }
      for (const s of sweeps().filter((x) => x.calls > 1))
        expect(s.ms).toBeGreaterThanOrEqual(((s.calls - 1) * 1000) / CALLS_PER_SECOND - 20);
    } finally {
      await h.system.stopInstance(second);
    }
  });

  // Guarantee: the conversations the partner sees did not change under the reconciliation: a
  // conversation reconciled many times holds each message once and counts it unread once.
  it('adds nothing to what is stored already', async () => {
    const list = (await h.call('GET', `/v1/conversations?account=${w.ig.id}`)).body
      .data as ConversationView[];
    const [conversation] = list;
    expect(conversation?.unread_count).toBe(1);
    const ids = (await messagesOf(h, conversation?.id as string)).map((m) => m.platform_message_id);
    expect(new Set(ids).size).toBe(ids.length);
  });
});
