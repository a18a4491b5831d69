import { api, connectThroughLink, createUser, eventually, newLink, recordEvents } from '@svc/testing';
import { type Stack, startStack } from '@svc/testing/stack';
import { afterAll, beforeAll, describe, expect, expectTypeOf, it } from 'vitest';
import { type Client, createClient, type EventOfType, type ListPage, paginate } from '../src/index.ts';

/**
 * The SDK's page iterator against the real system: conversations are followed by cursor, so new
 * activity while a partner's script iterates neither repeats nor skips the rest; other lists go
 * by page number.
 */
let stack: Stack;
let sdk: Client;
let workspace: string;
let igId: string;
let recorder: Awaited<ReturnType<typeof recordEvents>>;

beforeAll(async () => {
  stack = await startStack({ UNAUTHENTICATED_LIMIT_PER_MINUTE: '100000' });
  const { key } = await stack.system.createPartner(undefined, { limitPerMinute: 100_000 });
  sdk = createClient({ baseUrl: stack.gateway.url, apiKey: key });
  recorder = await recordEvents(stack.prefix);
  const user = await createUser(stack, [{ name: 'Iterated', instagram: { username: 'iterated_ig' } }]);
  const call = api(stack.gateway.url, key);
  const link = await newLink(call);
  workspace = link.workspaceId;
  await connectThroughLink(stack, link.url, 'page_network', { userId: user.user.id, decision: 'approve' });
  const accounts = await sdk.listWorkspaceAccounts({ params: { path: { id: workspace } } });
  igId = accounts.data.find((a) => a.network === 'photo_network')?.platform_id ?? '';
});
afterAll(async () => {
  await recorder?.close();
  await stack?.stop();
});

/** A DM from a person; answers its conversation id once the inbox announced it. */
async function dm(person: string): Promise<string> {
  const sent = await stack.sandboxControl<{ message_id: string }>(
    'POST',
    `/__sandbox/instagram/${igId}/messages`,
    {
      from: { username: person },
      text: `hi from ${person}`,
    },
  );
  return eventually(() => {
    const event = recorder.ofType('message.received').find((e) => {
      const data = e.data as { message: { platform_message_id: string } };
      return data.message.platform_message_id === sent.message_id;
    });
    return (event?.data as { conversation: { id: string } } | undefined)?.conversation.id;
  });
}

describe('paginate', () => {
  // Guarantee: iterating conversations with paginate follows next_cursor: when the oldest
  // conversation gets a message after the first page, the iteration yields no conversation twice
  // (by page number the second page would repeat one) and every other one once; the one with
  // new activity leads the list.
  it('follows the cursor of conversations while they change', async () => {
    const ids: string[] = [];
    for (let i = 0; i < 5; i++) ids.push(await dm(`iter_${i}`));
    const [c0, c1, c2, c3, c4] = ids;
    const yielded: string[] = [];
    const requests: Record<string, unknown>[] = [];
    for await (const conversation of paginate((at) => {
      requests.push(at);
      return sdk.listConversations({ params: { query: { workspace, limit: 2, ...at } } });
    })) {
      yielded.push(conversation.id);
      if (yielded.length === 2) await dm('iter_0');
    }
    expect(yielded).toEqual([c4, c3, c2, c1]);
    const now = await sdk.listConversations({ params: { query: { workspace, limit: 1 } } });
    expect(now.data[0]?.id).toBe(c0);
    expect(requests[0]).toEqual({ page: 1 });
    expect(requests.slice(1).every((r) => typeof r.starting_after === 'string')).toBe(true);
  });

  // Guarantee: a list without a cursor is read page after page until its total.
  it('goes by page number where a list has no cursor', async () => {
    const pages: ListPage<number>[] = [
      { data: [1, 2], page: 1, limit: 2, total: 5 },
      { data: [3, 4], page: 2, limit: 2, total: 5 },
      { data: [5], page: 3, limit: 2, total: 5 },
    ];
    const asked: unknown[] = [];
    const all: number[] = [];
    for await (const item of paginate(async (at) => {
      asked.push(at);
      return pages[asked.length - 1] as ListPage<number>;
    }))
      all.push(item);
    expect(all).toEqual([1, 2, 3, 4, 5]);
    expect(asked).toEqual([{ page: 1 }, { page: 2 }, { page: 3 }]);
  });

  // Guarantee: account.changed is a typed event of the SDK, with the account and previous_status.
  it('types account.changed', () => {
    type Changed = EventOfType<'account.changed'>;
    expectTypeOf<Changed['type']>().toEqualTypeOf<'account.changed'>();
    expectTypeOf<Changed['data']['previous_status']>().toEqualTypeOf<string>();
    expectTypeOf<Changed['data']['account']['last_error']>().toEqualTypeOf<string | null>();
  });
});
