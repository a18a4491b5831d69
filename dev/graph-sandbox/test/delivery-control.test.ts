import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { type Connected, eventually, type Harness, publishBoth, startHarness } from './harness.ts';

let h: Harness;
let c: Connected;
beforeAll(async () => {
  h = await startHarness();
  c = await h.connect();
});
afterAll(() => h.close());

type Webhook = { id: string | null; url: string | null; status: number | null; error: string | null };
type GraphError = { error: { code: number; message: string } };

const received = (text: string) => h.internet.webhooks.filter((w) => w.raw.toString().includes(text));
const settle = () => new Promise((resolve) => setTimeout(resolve, 100));

describe('withholding webhooks', () => {
  // Guarantee: a hold keeps back exactly the next matching webhook (account and kind): it is
  // listed as withheld, never sent, and can still be delivered late by a replay; others go out.
  it('withholds the next DM webhook of an account, which a replay delivers late', async () => {
    const hold = await h.control('POST', '/__sandbox/webhooks/withhold', {
      account_id: c.igId,
      kind: 'message',
    });
    expect(hold.status).toBe(201);
    expect(hold.body).toEqual({ hold: { account_id: c.igId, kind: 'message', times: 1 } });
    const onPage = await h.control<{ webhook: Webhook }>('POST', `/__sandbox/pages/${c.pageId}/messages`, {
      from: { name: 'Other Account' },
      text: 'not held: another account',
    });
    expect(onPage.body.webhook.status).toBe(200);
    const lost = await h.control<{ webhook: Webhook; message_id: string }>(
      'POST',
      `/__sandbox/instagram/${c.igId}/messages`,
      { from: { username: 'unlucky' }, text: 'this one never arrives' },
    );
    expect(lost.status).toBe(201);
    expect(lost.body.webhook).toEqual({
      id: expect.stringMatching(/^wh_/),
      url: `${h.internet.url}/webhook`,
      status: null,
      error: 'withheld',
    });
    const next = await h.control<{ webhook: Webhook }>('POST', `/__sandbox/instagram/${c.igId}/messages`, {
      from: { username: 'unlucky' },
      text: 'this one does',
    });
    expect(next.body.webhook.status).toBe(200);
    await settle();
    expect(received('this one never arrives')).toEqual([]);
    const log = (
      await h.control<{ data: { id: string; status: number | null; error: string | null }[] }>(
        'GET',
        '/__sandbox/webhooks',
      )
    ).body.data.filter((a) => a.id === lost.body.webhook.id);
    expect(log).toEqual([expect.objectContaining({ attempt: 1, status: null, error: 'withheld' })]);
    // The message itself is at the network: reading the conversation finds it.
    const conversations = await h.graph<{ data: { messages: { data: { id: string }[] } }[] }>(
      'GET',
      `/${c.pageId}/conversations`,
      c.pageToken,
      { query: { platform: 'instagram', fields: 'messages{id}' } },
    );
    const ids = conversations.body.data.flatMap((conv) => conv.messages.data.map((m) => m.id));
    expect(ids).toContain(lost.body.message_id);

    const replay = await h.control('POST', `/__sandbox/webhooks/${lost.body.webhook.id}/replay`, {});
    expect(replay.status).toBe(200);
    expect(received('this one never arrives')).toHaveLength(1);
  });

  // Guarantee: echoes and comments can be withheld by kind, `times` holds several, and DELETE
  // clears the holds left.
  it('withholds echoes and comments by kind, several times, until cleared', async () => {
    const person = await h.control<{ sender_id: string }>('POST', `/__sandbox/pages/${c.pageId}/messages`, {
      from: { name: 'Echo Test' },
      text: 'hi there',
    });
    await h.control('POST', '/__sandbox/webhooks/withhold', { kind: 'echo', times: 2 });
    for (const text of ['first unechoed', 'second unechoed', 'third echoed']) {
      const sent = await h.graph('POST', `/${c.pageId}/messages`, c.pageToken, {
        json: { recipient: { id: person.body.sender_id }, messaging_type: 'RESPONSE', message: { text } },
      });
      expect(sent.status).toBe(200);
    }
    await eventually(() => received('third echoed').length === 1);
    expect(received('unechoed')).toEqual([]);

    const { mediaId } = await publishBoth(h, c);
    await h.control('POST', '/__sandbox/webhooks/withhold', { kind: 'comment', times: 5 });
    const comment = await h.control<{ webhook: Webhook }>(
      'POST',
      `/__sandbox/instagram/media/${mediaId}/comments`,
      {
        from: { username: 'commenter' },
        text: 'held comment',
      },
    );
    expect(comment.body.webhook.error).toBe('withheld');
    expect(await h.control('DELETE', '/__sandbox/webhooks/withhold')).toMatchObject({ body: { cleared: 1 } });
    const after = await h.control<{ webhook: Webhook }>(
      'POST',
      `/__sandbox/instagram/media/${mediaId}/comments`,
      {
        from: { username: 'commenter' },
        text: 'delivered comment',
      },
    );
    expect(after.body.webhook.status).toBe(200);
  });

  // Guarantee: a bad hold is a 400 in the control API's plain error shape.
  it('refuses a bad hold', async () => {
    const bad = await h.control('POST', '/__sandbox/webhooks/withhold', { kind: 'reaction' });
    expect(bad.status).toBe(400);
    expect(bad.body).toEqual({ error: { message: expect.stringContaining('kind') } });
  });
});

describe('one permission of a grant', () => {
  // Guarantee: revoking one permission makes the calls that need it fail with Meta's permission
  // error (others keep working) and sends the `permissions` webhook; granting it back restores
  // them; `?webhook=false` changes the grant without telling the app.
  it('revokes and grants back one permission, with or without the permissions webhook', async () => {
    const conversations = () =>
      h.graph<GraphError>('GET', `/${c.pageId}/conversations`, c.pageToken, {
        query: { platform: 'instagram' },
      });
    expect((await conversations()).status).toBe(200);

    const revoked = await h.control<{ webhook: Webhook }>(
      'DELETE',
      `/__sandbox/users/${c.userId}/permissions/instagram_manage_messages`,
    );
    expect(revoked.body).toMatchObject({ permission: 'instagram_manage_messages', status: 'revoked' });
    expect(revoked.body.webhook.status).toBe(200);
    expect(h.lastWebhook()).toMatchObject({
      object: 'permissions',
      entry: [
        { id: c.userId, changes: [{ field: 'instagram_manage_messages', value: { verb: 'revoked' } }] },
      ],
    });
    const refused = await conversations();
    expect(refused.status).toBe(400);
    expect(refused.body.error).toMatchObject({ code: 200 });
    const pageDms = await h.graph('GET', `/${c.pageId}/conversations`, c.pageToken, {
      query: { platform: 'messenger' },
    });
    expect(pageDms.status).toBe(200);

    const granted = await h.control(
      'POST',
      `/__sandbox/users/${c.userId}/permissions/instagram_manage_messages`,
    );
    expect(granted.body).toMatchObject({ status: 'granted' });
    expect(h.lastWebhook().entry[0]?.changes?.[0]?.value).toEqual({ verb: 'granted' });
    expect((await conversations()).status).toBe(200);

    const before = h.internet.webhooks.length;
    const dropped = await h.control(
      'DELETE',
      `/__sandbox/users/${c.userId}/permissions/instagram_manage_messages?webhook=false`,
    );
    expect(dropped.body).toMatchObject({ status: 'revoked', webhook: null });
    await settle();
    expect(h.internet.webhooks.length).toBe(before);
    expect((await conversations()).status).toBe(400);
  });

  // Guarantee: an unknown user is a 404 and a malformed permission name a 400.
  it('refuses an unknown user and a bad permission name', async () => {
    expect((await h.control('DELETE', '/__sandbox/users/999/permissions/pages_messaging')).status).toBe(404);
    expect((await h.control('DELETE', `/__sandbox/users/${c.userId}/permissions/Bad-Name`)).status).toBe(400);
  });
});
