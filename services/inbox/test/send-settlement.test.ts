import type { MessageView } from '@svc/contracts/public';
import { eventually } from '@svc/testing';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { type Connected, connectedWorkspace, type InboxHarness } from './harness.ts';
import { eventsAbout, messagesOf, settle, startTunedInbox } from './tuned-system.ts';

/**
 * Sends whose outcome nobody learned, against the real stack with the inbox as its own process:
 * a DM whose Send API call timed out and whose echo never came, and a private reply whose inbox
 * was killed with -9 between claiming the comment and recording the answer (the sandbox holds the
 * send meanwhile). After a bounded time (here: unknown for 4 s, then the next reconciliation,
 * every second) the inbox asks the network: what went out is recorded and announced once and its
 * Idempotency-Key answers it; what did not is removed, so the key sends it and the comment is
 * available again.
 */
const SETTLE_AFTER_MS = 4_000;
let h: InboxHarness;
let w: Connected;

beforeAll(async () => {
  h = await startTunedInbox({
    run: 'source',
    inboxEnv: {
      GRAPH_API_TIMEOUT_MS: '1000',
      INBOX_SEND_SETTLE_AFTER_MS: String(SETTLE_AFTER_MS),
      INBOX_RECONCILE_INTERVAL_MS: '1000',
      INBOX_RECONCILE_CALLS_PER_SECOND: '2',
    },
  });
  w = await connectedWorkspace(h, 'Settled');
}, 180_000);
afterAll(() => h.stop());

type Answer = Awaited<ReturnType<InboxHarness['call']>>;
type SentLog = { data: { type: string; text: string | null; id: string; object_id: string | null }[] };

/** The Send API (and private replies) answer after `ms`: sent then, or refused then when `refused`. */
const holdSends = (ms: number, refused = false) =>
  h.system.sandboxControl('POST', '/__sandbox/faults', {
    method: 'POST',
    path: '/*/messages',
    delay_ms: ms,
    ...(refused ? { error: { code: 100, message: '(#100) The sandbox refused this one' } } : {}),
  });
const withholdEchoes = () =>
  h.system.sandboxControl('POST', '/__sandbox/webhooks/withhold', {
    account_id: w.page.platform_id,
    kind: 'echo',
  });
const sentWith = async (text: string) =>
  (await h.system.sandboxControl<SentLog>('GET', '/__sandbox/sent')).data.filter((s) => s.text === text);

/**
 * Retries slowly (the key's answer changes once the send is settled), staying under the key's rate
 * limit, for 30 s at most: the tests that use it allow 90 s, so that on a loaded CI machine the
 * answer it gives up with is what fails, with the services' warnings printed beside it.
 */
async function retryUntil(send: () => Promise<Answer>, done: (a: Answer) => boolean): Promise<Answer> {
  const deadline = Date.now() + 30_000;
  for (;;) {
    const answer = await send();
    if (done(answer) || Date.now() > deadline) return answer;
    await settle(400);
  }
}

/** A DM from a new person to the Page; answers its conversation id once stored. */
async function dmFrom(name: string, to: Connected = w): Promise<string> {
  const dm = await h.system.sandboxControl<{ message_id: string }>(
    'POST',
    `/__sandbox/pages/${to.page.platform_id}/messages`,
    { from: { name }, text: `hello from ${name}` },
  );
  // A fixture step, not the guarantee: a CI machine running files side by side may take longer.
  const [event] = await eventually(async () => {
    const found = await eventsAbout(h, to.workspace, 'message.received', dm.message_id);
    return found.length > 0 ? found : undefined;
  }, 90_000);
  return event?.data.conversation.id as string;
}

/** A comment on a new post of the Page; answers the comment as stored. */
async function comment(name: string): Promise<MessageView> {
  const post = await h.call('POST', '/v1/posts?wait=true', {
    workspace: w.workspace,
    caption: `Post for ${name}`,
    targets: [w.page.id],
  });
  const objectId = post.body.targets[0].platform_post_id as string;
  const added = await h.system.sandboxControl<{ id: string }>(
    'POST',
    `/__sandbox/pages/posts/${objectId}/comments`,
    {
      from: { name },
      text: `a comment by ${name}`,
    },
  );
  const [event] = await eventually(async () => {
    const found = await eventsAbout(h, w.workspace, 'comment.received', added.id);
    return found.length > 0 ? found : undefined;
  });
  return event?.data.message as MessageView;
}

const commentNow = async (c: MessageView) =>
  (await messagesOf(h, c.conversation)).find((m) => m.id === c.id) as MessageView;

describe('a DM whose send timed out and never echoed', () => {
  // Guarantee: the key answers 409 only while the outcome is unknown; once the network was asked
  // and has the message, the key answers it (replayed), it is stored and announced once, and the
  // person got it once.
  // The file's first test: under a loaded CI machine its first DM has taken over 30 s to arrive.
  it('is recorded once the network shows it, and its key answers it', { timeout: 120_000 }, async () => {
    const conversation = await dmFrom('Patient Customer');
    const text = 'Your order ships today';
    const send = () =>
      h.call(
        'POST',
        `/v1/conversations/${conversation}/messages`,
        { text },
        { 'Idempotency-Key': 'dm-timeout-1' },
      );
    await withholdEchoes();
    await holdSends(2_000);
    const first = await send();
    expect(first.status).toBe(502);
    expect(first.body.error.code).toBe('network_error');
    const meanwhile = await send();
    expect(meanwhile.status).toBe(409);
    expect(meanwhile.body.error.code).toBe('conflict');

    const settled = await retryUntil(send, (a) => a.status !== 409);
    expect(settled.status).toBe(201);
    expect(settled.headers.get('idempotent-replayed')).toBe('true');
    const [network] = await sentWith(text);
    expect(await sentWith(text)).toHaveLength(1);
    expect(settled.body).toMatchObject({
      text,
      platform_message_id: network?.id,
      direction: 'outbound',
      source: 'api',
    });
    expect((await messagesOf(h, conversation)).filter((m) => m.text === text)).toHaveLength(1);
    await settle(1_500);
    expect(await eventsAbout(h, w.workspace, 'message.sent', network?.id as string)).toHaveLength(1);
  });

  // Guarantee: when the network refused the send after our call had timed out, nothing is kept:
  // the key sends it (once) after the settlement instead of answering 409 for good.
  it('is removed when the network does not have it, and its key sends it then', async () => {
    const conversation = await dmFrom('Second Customer');
    const text = 'This one went nowhere';
    const send = () =>
      h.call(
        'POST',
        `/v1/conversations/${conversation}/messages`,
        { text },
        { 'Idempotency-Key': 'dm-timeout-2' },
      );
    await holdSends(2_000, true);
    expect((await send()).status).toBe(502);
    expect((await send()).status).toBe(409);
    const settled = await retryUntil(send, (a) => a.status !== 409);
    expect(settled.status).toBe(201);
    expect(settled.headers.get('idempotent-replayed')).toBeNull();
    expect(await sentWith(text)).toHaveLength(1);
    const again = await send();
    expect(again.status).toBe(201);
    expect(again.body.id).toBe(settled.body.id);
    expect(await sentWith(text)).toHaveLength(1);
  }, 90_000);
});

describe('a send whose account is deleted before it settled', () => {
  // Guarantee: nobody can ask the network for it any more, so it is given up: its key then
  // answers what any answer there gets, 409 account_disconnected, not "still being sent" for good.
  it('is given up, and its key answers account_disconnected', async () => {
    const leaving = await connectedWorkspace(h, 'Leaving');
    const conversation = await dmFrom('Left Waiting', leaving);
    const send = () =>
      h.call(
        'POST',
        `/v1/conversations/${conversation}/messages`,
        { text: 'sent as the account left' },
        { 'Idempotency-Key': 'dm-account-gone' },
      );
    await holdSends(2_000, true);
    expect((await send()).status).toBe(502);
    expect((await h.call('DELETE', `/v1/accounts/${leaving.page.id}`)).status).toBe(204);
    expect((await send()).body.error.code).toBe('conflict');
    const settled = await retryUntil(send, (a) => a.body.error?.code !== 'conflict');
    expect(settled.status).toBe(409);
    expect(settled.body.error.code).toBe('account_disconnected');
  }, 90_000);
});

describe('a private reply whose inbox died between claim and answer', () => {
  /** Starts a private reply the sandbox holds, and kills the inbox (-9) while it waits. */
  async function crashDuring(c: MessageView, text: string, key: string, refused: boolean) {
    await holdSends(3_000, refused);
    const inFlight = h.call(
      'POST',
      `/v1/messages/${c.id}/private-reply`,
      { text },
      { 'Idempotency-Key': key },
    );
    await settle(1_200);
    const inbox = h.system.child('inbox');
    await inbox.stop('SIGKILL');
    expect((await inFlight).status).toBeGreaterThanOrEqual(500);
    await inbox.restart();
  }

  // Guarantee: the comment is not blocked for good: once the network was asked and has the
  // reply, the comment shows it sent (with its text), the reply sits in the commenter's DM thread
  // naming the account as sender, is announced once, and the key answers it.
  it('is recorded once the network shows it', async () => {
    const c = await comment('Crash Commenter');
    const text = 'We sent you the details';
    const key = 'private-crash-1';
    await crashDuring(c, text, key, false);
    const answered = await eventually(async () => {
      const now = await commentNow(c);
      return now.private_reply?.state === 'sent' ? now : undefined;
    }, 30_000);
    expect(answered.private_reply).toMatchObject({ state: 'sent', message: text });
    const retry = await h.call(
      'POST',
      `/v1/messages/${c.id}/private-reply`,
      { text },
      { 'Idempotency-Key': key },
    );
    expect(retry.status).toBe(201);
    expect(retry.headers.get('idempotent-replayed')).toBe('true');
    expect(retry.body).toMatchObject({ kind: 'private_reply', text, from: { id: w.page.platform_id } });
    expect((await h.call('GET', `/v1/conversations/${retry.body.conversation}`)).body.kind).toBe('dm');
    const sent = (await sentWith(text)).filter((s) => s.type === 'private_reply');
    expect(sent.map((s) => s.object_id)).toEqual([c.platform_message_id]);
    await settle(1_500);
    expect(await eventsAbout(h, w.workspace, 'message.sent', retry.body.platform_message_id)).toHaveLength(1);
  }, 90_000);

  // Guarantee: when the network never sent it, the comment is available again (not blocked while
  // the API says available), and the key then sends the reply.
  it('frees the comment when the network does not have it', async () => {
    const c = await comment('Second Crash');
    const text = 'This reply never left';
    const key = 'private-crash-2';
    await crashDuring(c, text, key, true);
    const send = () =>
      h.call('POST', `/v1/messages/${c.id}/private-reply`, { text }, { 'Idempotency-Key': key });
    const settled = await retryUntil(send, (a) => a.status !== 409 && a.status < 500);
    expect(settled.status).toBe(201);
    expect(settled.headers.get('idempotent-replayed')).toBeNull();
    expect((await commentNow(c)).private_reply).toMatchObject({ state: 'sent', message: text });
    expect(await sentWith(text)).toHaveLength(1);
  }, 90_000);
});
