import { api, connectThroughLink, createUser, eventually, newLink, recordEvents } from '@svc/testing';
import { type Stack, startStack } from '@svc/testing/stack';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { callTool, mcpClient } from './mcp-client.ts';

/**
 * Cursor paging of conversation lists (`starting_after` = `next_cursor`, `has_more`) on REST, the
 * widget's API and the MCP tool, against DMs the sandbox delivers as Meta would: new activity
 * while a partner pages moves a conversation to the front without repeating or skipping the rest.
 */
let stack: Stack;
let call: ReturnType<typeof api>;
let key: string;
let recorder: Awaited<ReturnType<typeof recordEvents>>;
let workspace: string;
let igId: string;

interface Page {
  data: { id: string; last_message_at: string }[];
  page: number;
  limit: number;
  total: number;
  has_more: boolean;
  next_cursor: string | null;
}

beforeAll(async () => {
  stack = await startStack({ UNAUTHENTICATED_LIMIT_PER_MINUTE: '100000' });
  key = (await stack.system.createPartner(undefined, { limitPerMinute: 100_000 })).key;
  call = api(stack.gateway.url, key);
  recorder = await recordEvents(stack.prefix);
  const user = await createUser(stack, [{ name: 'Paging Page', instagram: { username: 'paging_ig' } }]);
  const link = await newLink(call);
  workspace = link.workspaceId;
  await connectThroughLink(stack, link.url, 'page_network', { userId: user.user.id, decision: 'approve' });
  const accounts = (await call('GET', `/v1/workspaces/${workspace}/accounts`)).body.data;
  igId = accounts.find((a: { network: string }) => a.network === 'photo_network').platform_id;
});
afterAll(async () => {
  await recorder?.close();
  await stack?.stop();
});

/** A DM from a person (a new conversation the first time); answers its conversation once recorded. */
async function dm(person: string): Promise<string> {
  const sent = await stack.sandboxControl<{ message_id: string }>(
    'POST',
    `/__sandbox/instagram/${igId}/messages`,
    { from: { username: person, name: person }, text: `hello from ${person}` },
  );
  // A fixture step, not the guarantee: a CI machine running files side by side may take longer.
  return eventually(() => {
    const event = recorder
      .ofType('message.received')
      .find(
        (e) =>
          (e.data as { message: { platform_message_id: string } }).message.platform_message_id ===
          sent.message_id,
      );
    return (event?.data as { conversation: { id: string } } | undefined)?.conversation.id;
  }, 60_000);
}

const list = async (query: string): Promise<{ status: number; body: Page }> =>
  call('GET', `/v1/conversations?workspace=${workspace}&kind=dm&${query}`);

describe('conversation lists by cursor', () => {
  let people: string[] = [];
  beforeAll(async () => {
    // Seven conversations, p6 the latest.
    people = [];
    for (let i = 0; i < 7; i++) people.push(await dm(`pager_${i}`));
  }, 180_000);

  // Guarantee: walking by next_cursor while conversations get new activity lists every
  // conversation whose activity did not change exactly once, never lists one twice (one already
  // listed that gets a message is not repeated), and one that gets a message before the walk
  // reaches it is at the front of the list instead; the last page says has_more false.
  it('neither repeats nor skips the conversations that did not change', async () => {
    const [p0, p1, p2, p3, p4, p5, p6] = people;
    const first = await list('limit=2');
    expect(first.status).toBe(200);
    expect(first.body).toMatchObject({ page: 1, limit: 2, total: 7, has_more: true });
    expect(first.body.data.map((c) => c.id)).toEqual([p6, p5]);
    const walked = first.body.data.map((c) => c.id);

    // While the partner pages: activity on one listed (p5), on one not reached yet (p1), a new one.
    await dm('pager_5');
    await dm('pager_1');
    const p7 = await dm('pager_7');

    let cursor = first.body.next_cursor;
    for (let pages = 0; cursor && pages < 10; pages++) {
      const next = await list(`limit=2&starting_after=${cursor}`);
      expect(next.status).toBe(200);
      expect(next.body.total).toBe(8);
      walked.push(...next.body.data.map((c) => c.id));
      cursor = next.body.has_more ? next.body.next_cursor : null;
      if (!next.body.has_more) expect(next.body.next_cursor).toBeNull();
    }
    expect(walked).toEqual([p6, p5, p4, p3, p2, p0]);
    expect(new Set(walked).size).toBe(walked.length);
    // Those with new activity lead the list now.
    expect((await list('limit=3')).body.data.map((c) => c.id)).toEqual([p7, p1, p5]);
  });

  // Guarantee: a cursor the list did not return is a 400 validation_error naming starting_after
  // (garbage, a forged shape, one too long), and a cursor with a page number names page.
  it('refuses what is not a cursor of the list', async () => {
    const { next_cursor: cursor } = (await list('limit=1')).body;
    const forged = Buffer.from(JSON.stringify({ t: 1, id: 'conv_nope' })).toString('base64url');
    for (const bad of ['not%20a%20cursor', forged, 'A'.repeat(201), `${cursor}x`.slice(1)]) {
      const refused = await list(`starting_after=${bad}`);
      expect(refused.status, bad).toBe(400);
      expect(refused.body).toMatchObject({ error: { code: 'validation_error', field: 'starting_after' } });
    }
    const both = await list(`page=2&starting_after=${cursor}`);
    expect(both.body).toMatchObject({ error: { code: 'validation_error', field: 'page' } });
  });

  // Guarantee: the widget's list and the MCP tool page by the same cursor and answer the same
  // pages as REST.
  it('pages the same way in the widget and over MCP', async () => {
    const session = await call('POST', '/v1/embed-sessions', {
      workspace,
      allowed_origins: ['https://app.partner.example'],
    });
    const widget = api(stack.gateway.url, session.body.token);
    const mcp = await mcpClient(`${stack.gateway.url}/mcp`, { key, workspace });
    try {
      const rest1 = (await list('limit=3')).body;
      const rest2 = (await list(`limit=3&starting_after=${rest1.next_cursor}`)).body;
      const embed1 = (await widget('GET', '/v1/embed/conversations?kind=dm&limit=3')).body as Page;
      expect(embed1).toEqual(rest1);
      const embed2 = await widget(
        'GET',
        `/v1/embed/conversations?kind=dm&limit=3&starting_after=${embed1.next_cursor}`,
      );
      expect(embed2.body).toEqual(rest2);
      const tool1 = await callTool(mcp, 'list_conversations', { kind: 'dm', limit: 3 });
      expect(tool1.value).toEqual(rest1);
      const tool2 = await callTool(mcp, 'list_conversations', {
        kind: 'dm',
        limit: 3,
        starting_after: tool1.value.next_cursor,
      });
      expect(tool2.value).toEqual(rest2);
    } finally {
      await mcp.close();
    }
  });
});
