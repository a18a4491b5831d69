import type { MessageView } from '@svc/contracts/public';
import { eventually } from '@svc/testing';
import sharp from 'sharp';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { type Connected, connectedWorkspace, dataOf, type InboxHarness } from './harness.ts';
import { eventsAbout, messagesOf, startTunedInbox } from './tuned-system.ts';

/**
 * What an outbound message records, through the gateway against the sandbox: the network's own
 * URL of a file we sent (ours expires within the hour), the account as the sender of every
 * outbound message (private replies included), and 409 account_disconnected for an answer from
 * an account that was deleted.
 */
let h: InboxHarness;
let w: Connected;

beforeAll(async () => {
  h = await startTunedInbox({ inboxEnv: {} });
  w = await connectedWorkspace(h, 'Outbound');
}, 120_000);
afterAll(() => h.stop());

/** A DM from a new person to the account; answers its conversation id once recorded. */
async function dmFrom(name: string, account: Connected['page'], path: string): Promise<string> {
  const sent = await h.system.sandboxControl<{ message_id: string }>(
    'POST',
    `/__sandbox/${path}/${account.platform_id}/messages`,
    { from: { username: name, name }, text: `hi from ${name}` },
  );
  return eventually(() => {
    const event = h.recorder
      .ofType('message.received')
      .find((e) => dataOf(e).message.platform_message_id === sent.message_id);
    return event ? (dataOf(event).conversation.id as string) : undefined;
  });
}

/** A comment on a new post of the workspace's Page; answers the comment's message once recorded. */
async function commentOnOurPost(workspace: Connected, name: string): Promise<MessageView> {
  const post = await h.call('POST', '/v1/posts?wait=true', {
    workspace: workspace.workspace,
    caption: `A post for ${name}`,
    targets: [workspace.page.id],
  });
  const objectId = post.body.targets[0].platform_post_id as string;
  const comment = await h.system.sandboxControl<{ id: string }>(
    'POST',
    `/__sandbox/pages/posts/${objectId}/comments`,
    {
      from: { name },
      text: `a question from ${name}`,
    },
  );
  return eventually(() => {
    const event = h.recorder
      .ofType('comment.received')
      .find((e) => dataOf(e).message.platform_message_id === comment.id);
    return event ? dataOf(event).message : undefined;
  });
}

async function uploadSquare(): Promise<string> {
  const image = await sharp({ create: { width: 64, height: 64, channels: 3, background: '#c84' } })
    .jpeg()
    .toBuffer();
  const form = new FormData();
  form.append('workspace', w.workspace);
  form.append('file', new Blob([new Uint8Array(image)]), 'square.jpg');
  const response = await fetch(`${h.system.gatewayUrl}/v1/media`, {
    method: 'POST',
    headers: { authorization: `Bearer ${h.key}` },
    body: form,
  });
  return ((await response.json()) as { id: string }).id;
}

describe('a file sent in a DM', () => {
  // Guarantee: an image sent in a DM is stored, answered and announced with the network's URL of
  // it (read back from the network after the send), which keeps working, not with our signed
  // media URL, which expires within the hour.
  it("keeps the network's URL of the file, not ours", async () => {
    const conversation = await dmFrom('wants_a_picture', w.ig, 'instagram');
    const sent = await h.call('POST', `/v1/conversations/${conversation}/messages`, {
      media: [await uploadSquare()],
    });
    expect(sent.status).toBe(201);
    const cdn = `${h.system.addresses.sandboxUrl}/__sandbox/cdn/`;
    const [attachment] = sent.body.attachments as MessageView['attachments'];
    expect(attachment?.url?.startsWith(cdn)).toBe(true);
    expect(attachment).toMatchObject({ type: 'image', mime: 'image/jpeg', width: 64, height: 64 });
    const stored = (await messagesOf(h, conversation)).find((m) => m.id === sent.body.id);
    expect(stored?.attachments).toEqual([attachment]);
    const [event] = await eventually(async () => {
      const found = await eventsAbout(h, w.workspace, 'message.sent', sent.body.platform_message_id);
      return found.length > 0 ? found : undefined;
    });
    // Its echo may have completed the send first: the event names the network's URL either way.
    expect(event?.data.message.attachments.map((a) => a.url)).toEqual([attachment?.url]);
    const file = await fetch(attachment?.url ?? '');
    expect(file.status).toBe(200);
    expect(file.headers.get('content-type')).toBe('image/jpeg');
  });
});

describe('the sender of outbound messages', () => {
  // Guarantee: a private reply names the account as its sender (`from`), as outbound DMs do, in
  // the answer, in REST and in its message.sent event.
  it('names the account on a private reply', async () => {
    const comment = await commentOnOurPost(w, 'Wants A DM');
    const reply = await h.call('POST', `/v1/messages/${comment.id}/private-reply`, { text: 'Sent you a DM' });
    expect(reply.status).toBe(201);
    const account = { id: w.page.platform_id, name: null, handle: null };
    expect(reply.body).toMatchObject({ kind: 'private_reply', direction: 'outbound', from: account });
    expect((await messagesOf(h, reply.body.conversation)).find((m) => m.id === reply.body.id)?.from).toEqual(
      account,
    );
    const [event] = await eventually(async () => {
      const found = await eventsAbout(h, w.workspace, 'message.sent', reply.body.platform_message_id);
      return found.length > 0 ? found : undefined;
    });
    expect(event?.data.message.from).toEqual(account);
    const dm = await h.call(
      'POST',
      `/v1/conversations/${await dmFrom('also_answered', w.page, 'pages')}/messages`,
      {
        text: 'and a DM',
      },
    );
    expect(dm.body.from).toEqual(account);
  });
});

describe('an account that was deleted', () => {
  // Guarantee: answering in a conversation whose account was deleted (a DM, a comment reply, a
  // private reply) is 409 account_disconnected, as the spec says for posts, not 404; the
  // conversation itself stays readable.
  it('answers 409 account_disconnected', async () => {
    const gone = await connectedWorkspace(h, 'Deleted Later');
    const conversation = await dmFrom('left_behind', gone.page, 'pages');
    const comment = await commentOnOurPost(gone, 'Also Left');
    expect((await h.call('DELETE', `/v1/accounts/${gone.page.id}`)).status).toBe(204);

    const dm = await h.call('POST', `/v1/conversations/${conversation}/messages`, { text: 'still there?' });
    expect(dm.status).toBe(409);
    expect(dm.body.error).toMatchObject({ code: 'account_disconnected' });
    const reply = await h.call('POST', `/v1/conversations/${comment.conversation}/messages`, {
      text: 'thanks',
      reply_to: comment.id,
    });
    expect(reply.status).toBe(409);
    expect(reply.body.error.code).toBe('account_disconnected');
    const privately = await h.call('POST', `/v1/messages/${comment.id}/private-reply`, { text: 'DM' });
    expect(privately.status).toBe(409);
    expect(privately.body.error).toMatchObject({ code: 'account_disconnected' });
    expect((await h.call('GET', `/v1/conversations/${conversation}`)).status).toBe(200);
  });
});
