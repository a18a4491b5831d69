import { readFile } from 'node:fs/promises';
import { createServer, type Server } from 'node:http';
import type { Client } from '@modelcontextprotocol/client';
import { api, connectThroughLink, createUser, eventually, recordEvents, videoFixture } from '@svc/testing';
import { type Stack, startStack } from '@svc/testing/stack';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { callTool, mcpClient } from './mcp-client.ts';

/**
 * The MCP endpoint driven by the official SDK's client against the whole stack and the sandbox:
 * every tool answers what its REST route answers, writes behave as REST (events, idempotency,
 * `created_by`/`source` of "mcp"), refusals are the spec's envelope, a workspace stays isolated,
 * replicas share no session, and the 2025 and 2026 protocol revisions are negotiated.
 */
let stack: Stack;
let rest: ReturnType<typeof api>;
let partnerKey: string;
let mcp: Client;
let recorder: Awaited<ReturnType<typeof recordEvents>>;
let pixelServer: Server;
let pixelUrl: string;
const w = { id: '', page: '', pagePlatform: '', ig: '', other: '', ownKey: '', otherKey: '' };

/** A 1x1 PNG, served locally (private addresses are allowed in development). */
const PIXEL = Buffer.from(
  'iVBORw0KGgoAAAANSUhEUgAAAAEAAAABCAYAAAAfFcSJAAAADUlEQVR42mNk+M9QDwADhgGAWjR9awAAAABJRU5ErkJggg==',
  'base64',
);

beforeAll(async () => {
  stack = await startStack({ UNAUTHENTICATED_LIMIT_PER_MINUTE: '100000' });
  const partner = await stack.createPartner();
  partnerKey = partner.key;
  rest = api(stack.gateway.url, partnerKey);
  recorder = await recordEvents(stack.prefix);
  pixelServer = createServer((_req, res) => res.end(PIXEL));
  await new Promise<void>((resolve) => pixelServer.listen(0, '127.0.0.1', resolve));
  pixelUrl = `http://127.0.0.1:${(pixelServer.address() as { port: number }).port}/pixel.png`;
  w.id = (await rest('POST', '/v1/workspaces', { name: 'MCP' })).body.id;
  w.other = (await rest('POST', '/v1/workspaces', { name: 'MCP other' })).body.id;
  w.ownKey = (await rest('POST', `/v1/workspaces/${w.id}/keys`, { label: 'agent' })).body.key;
  w.otherKey = (await rest('POST', `/v1/workspaces/${w.other}/keys`, { label: 'other' })).body.key;
  const user = await createUser(stack, [{ name: 'MCP Page', instagram: { username: 'mcp_ig' } }]);
  const link = (await rest('POST', `/v1/workspaces/${w.id}/connect-links`, {})).body;
  await connectThroughLink(stack, link.url, 'page_network', { userId: user.user.id, decision: 'approve' });
  const accounts = (await rest('GET', `/v1/workspaces/${w.id}/accounts`)).body.data;
  const page = accounts.find((a: { network: string }) => a.network === 'page_network');
  w.page = page.id;
  w.pagePlatform = page.platform_id;
  w.ig = accounts.find((a: { network: string }) => a.network === 'photo_network').id;
  mcp = await mcpClient(`${stack.gateway.url}/mcp`, { key: partnerKey, workspace: w.id });
});
afterAll(async () => {
  await mcp?.close();
  await recorder?.close();
  pixelServer?.closeAllConnections();
  pixelServer?.close();
  await stack?.stop();
});

const TOOLS = [
  'list_accounts',
  'get_account',
  'refresh_account',
  'create_connect_link',
  'get_publishing_limit',
  'create_media_from_url',
  'create_post',
  'dry_run_post',
  'get_post',
  'list_posts',
  'update_post',
  'publish_post',
  'list_conversations',
  'read_messages',
  'send_message',
  'send_private_reply',
  'mark_conversation_read',
  'list_events',
];

describe('tools', () => {
  // Guarantee: the tool list an agent sees: at most 25 tools, each described, with input and
  // output schemas (the REST route's, advertised as JSON Schema).
  it('lists every tool with a description and schemas', async () => {
    const { tools } = await mcp.listTools();
    expect(tools.map((t) => t.name).sort()).toEqual([...TOOLS].sort());
    expect(tools.length).toBeLessThanOrEqual(25);
    for (const tool of tools) {
      expect(tool.description?.length, tool.name).toBeGreaterThan(30);
      expect(tool.inputSchema.type, tool.name).toBe('object');
      expect(tool.outputSchema?.type, tool.name).toBe('object');
    }
    const create = tools.find((t) => t.name === 'create_post');
    expect(Object.keys(create?.inputSchema.properties ?? {})).toEqual(
      expect.arrayContaining(['caption', 'targets', 'media', 'draft', 'idempotency_key']),
    );
    // The workspace comes from the key or the header, never from an argument.
    expect(create?.inputSchema.properties).not.toHaveProperty('workspace');
  });

  // Guarantee: each read tool answers exactly what its REST route answers.
  it('reads what REST reads', async () => {
    const draft = (
      await rest('POST', '/v1/posts', { workspace: w.id, caption: 'read me', targets: [w.page], draft: true })
    ).body;
    const pairs: [string, Record<string, unknown>, string][] = [
      ['list_accounts', {}, `/v1/workspaces/${w.id}/accounts`],
      ['get_account', { account_id: w.page }, `/v1/accounts/${w.page}`],
      ['get_publishing_limit', { account_id: w.ig }, `/v1/accounts/${w.ig}/publishing-limit`],
      ['get_post', { post_id: draft.id }, `/v1/posts/${draft.id}`],
      ['list_posts', { limit: 10 }, `/v1/posts?workspace=${w.id}&limit=10`],
      ['list_events', { type: 'account.connected' }, `/v1/events?workspace=${w.id}&type=account.connected`],
    ];
    for (const [tool, args, path] of pairs) {
      const [viaMcp, viaRest] = [await callTool(mcp, tool, args), await rest('GET', path)];
      expect(viaRest.status, path).toBe(200);
      expect(viaMcp, tool).toEqual({ isError: false, value: viaRest.body });
    }
  });
});

describe('resources', () => {
  // Guarantee: the read-only resources hold the REST records of the workspace, and a post of
  // another workspace is "resource not found", not its content.
  it("reads the accounts and a post as resources; not another workspace's", async () => {
    const post = (
      await rest('POST', '/v1/posts', {
        workspace: w.id,
        caption: 'resource',
        targets: [w.page],
        draft: true,
      })
    ).body;
    const read = async (client: Client, uri: string) => {
      const { contents } = await client.readResource({ uri });
      return JSON.parse((contents[0] as { text: string }).text);
    };
    expect(await read(mcp, `social://posts/${post.id}`)).toEqual(post);
    expect(await read(mcp, 'social://workspace/accounts')).toEqual(
      (await rest('GET', `/v1/workspaces/${w.id}/accounts?limit=200`)).body.data,
    );
    const stranger = await mcpClient(`${stack.gateway.url}/mcp`, { key: w.otherKey });
    await expect(stranger.readResource({ uri: `social://posts/${post.id}` })).rejects.toThrow(/not found/i);
    await expect(stranger.readResource({ uri: 'social://conversations/conv_nope' })).rejects.toThrow(
      /not found/i,
    );
    await stranger.close();
  });
});

describe('writes', () => {
  // Guarantee: a post created over MCP is the same post REST shows, created_by "mcp"; the same
  // idempotency_key gives the same post again, with other arguments a conflict.
  it('creates posts as REST does, idempotently, created_by mcp', async () => {
    const args = {
      caption: 'from an agent',
      targets: [w.page],
      draft: true,
      idempotency_key: 'mcp-create-1',
    };
    const created = await callTool(mcp, 'create_post', args);
    expect(created.isError).toBe(false);
    expect(created.value).toMatchObject({ created_by: 'mcp', caption: 'from an agent', workspace: w.id });
    expect(created.value).toEqual((await rest('GET', `/v1/posts/${created.value.id}`)).body);
    const again = await callTool(mcp, 'create_post', args);
    expect(again.value.id).toBe(created.value.id);
    const changed = await callTool(mcp, 'create_post', { ...args, caption: 'something else' });
    expect(changed).toMatchObject({ isError: true, value: { error: { code: 'conflict' } } });
    const listed = (await rest('GET', `/v1/posts?workspace=${w.id}&limit=200`)).body.data;
    expect(listed.filter((p: { caption: string }) => p.caption === 'from an agent')).toHaveLength(1);
  });

  // Guarantee (issue 28): create_post and dry_run_post take the new formats: a top-level format,
  // targets as objects with their own format, and Reel settings, as REST does.
  it('takes formats, per-target formats and Reel settings', async () => {
    const form = new FormData();
    form.append('workspace', w.id);
    const bytes = await readFile(videoFixture('reel-h264-aac.mp4'));
    form.append('file', new Blob([new Uint8Array(bytes)]), 'reel.mp4');
    const uploaded = await fetch(`${stack.gateway.url}/v1/media`, {
      method: 'POST',
      headers: { authorization: `Bearer ${partnerKey}` },
      body: form,
    });
    const video = ((await uploaded.json()) as { id: string }).id;
    const args = {
      caption: 'a reel from an agent',
      media: [video],
      targets: [{ account: w.ig, format: 'reel' }, w.page],
      reel: { share_to_feed: false },
    };
    const checked = await callTool(mcp, 'dry_run_post', args);
    expect(checked.isError).toBe(false);
    const planned = checked.value.targets.map((t: { format: string; would_send: { kind: string } }) => [
      t.format,
      t.would_send.kind,
    ]);
    expect(planned).toEqual([
      ['reel', 'reel'],
      ['feed', 'video'],
    ]);
    const created = await callTool(mcp, 'create_post', { ...args, draft: true });
    expect(created.value).toMatchObject({
      reel: { share_to_feed: false, cover: null, collaborators: [], location: null },
      targets: [
        { account: w.ig, format: 'reel' },
        { account: w.page, format: 'feed' },
      ],
    });
    const refused = await callTool(mcp, 'dry_run_post', {
      ...args,
      targets: [w.ig],
      format: 'story',
      media: [],
    });
    expect(refused).toMatchObject({ isError: true, value: { error: { code: 'unsupported' } } });
  });

  // Guarantee: a dry run answers what REST's dry run answers (its refusal too) and creates nothing.
  it('dry-runs as REST does', async () => {
    const before = (await rest('GET', `/v1/posts?workspace=${w.id}`)).body.total;
    const body = { caption: 'dry', targets: [w.page] };
    const viaMcp = await callTool(mcp, 'dry_run_post', body);
    const viaRest = await rest('POST', '/v1/posts?dry_run=true', { ...body, workspace: w.id });
    expect(viaRest.status).toBe(200);
    expect(viaMcp).toEqual({ isError: false, value: viaRest.body });
    // Text only on the photo network: the same refusal (unsupported) either way.
    const textOnly = { caption: 'dry', targets: [w.ig] };
    const refusedRest = await rest('POST', '/v1/posts?dry_run=true', { ...textOnly, workspace: w.id });
    expect(refusedRest.status).toBe(400);
    expect(await callTool(mcp, 'dry_run_post', textOnly)).toEqual({ isError: true, value: refusedRest.body });
    expect((await rest('GET', `/v1/posts?workspace=${w.id}`)).body.total).toBe(before);
  });

  // Guarantee: media by URL, update, publish with wait, connect links and refresh: the records
  // REST shows afterwards, and the post.published event of a publish.
  it('adds media, updates, publishes, links and refreshes like REST', async () => {
    const media = await callTool(mcp, 'create_media_from_url', { url: pixelUrl });
    expect(media.value).toMatchObject({ mime: 'image/png', width: 1, height: 1 });
    expect(media.value).toEqual((await rest('GET', `/v1/media/${media.value.id}`)).body);

    const draft = await callTool(mcp, 'create_post', { caption: 'v1', targets: [w.page], draft: true });
    const updated = await callTool(mcp, 'update_post', { post_id: draft.value.id, caption: 'v2' });
    expect(updated.value.caption).toBe('v2');
    const published = await callTool(mcp, 'publish_post', { post_id: draft.value.id, wait: true });
    expect(published.value.status).toBe('published');
    expect(published.value).toEqual((await rest('GET', `/v1/posts/${draft.value.id}`)).body);
    await eventually(() => {
      const event = recorder
        .ofType('post.published')
        .find((e) => (e.data as { post: { id: string } }).post.id === draft.value.id);
      if (!event) throw new Error('no post.published yet');
      return true;
    });
    const refused = await callTool(mcp, 'update_post', { post_id: draft.value.id, caption: 'v3' });
    expect(refused).toMatchObject({ isError: true, value: { error: { code: 'conflict' } } });

    const link = await callTool(mcp, 'create_connect_link', { networks: ['page_network'] });
    expect(link.value).toMatchObject({ workspace: w.id, networks: ['page_network'] });
    expect(link.value.url).toMatch(/^http/);
    const refreshed = await callTool(mcp, 'refresh_account', { account_id: w.page });
    expect(refreshed.value).toEqual((await rest('GET', `/v1/accounts/${w.page}`)).body);
  });
});

describe('inbox', () => {
  // Guarantee: conversations and messages read as REST reads them; a send goes out with source
  // "mcp" and its message.sent event says so; mark read clears the unread count.
  it('reads, answers and marks read, with source mcp', async () => {
    await stack.sandboxControl('POST', `/__sandbox/pages/${w.pagePlatform}/messages`, {
      from: { name: 'Agent Customer' },
      text: 'Are you open on Sunday?',
    });
    const conversation = await eventually(async () => {
      const listed = await callTool(mcp, 'list_conversations', { kind: 'dm' });
      if (listed.value.total < 1) throw new Error('no conversation yet');
      return listed.value.data[0];
    });
    const listedRest = await rest('GET', `/v1/conversations?workspace=${w.id}&kind=dm`);
    expect((await callTool(mcp, 'list_conversations', { kind: 'dm' })).value).toEqual(listedRest.body);
    expect((await callTool(mcp, 'read_messages', { conversation_id: conversation.id })).value).toEqual(
      (await rest('GET', `/v1/conversations/${conversation.id}/messages`)).body,
    );

    const sent = await callTool(mcp, 'send_message', {
      conversation_id: conversation.id,
      text: 'Yes, 9 to 1',
    });
    expect(sent.value).toMatchObject({ direction: 'outbound', source: 'mcp', text: 'Yes, 9 to 1' });
    await eventually(() => {
      const event = recorder
        .ofType('message.sent')
        .find((e) => (e.data as { message: { id: string } }).message.id === sent.value.id);
      if (!event) throw new Error('no message.sent yet');
      expect((event.data as { message: { source: string } }).message.source).toBe('mcp');
      return true;
    });
    const read = await callTool(mcp, 'mark_conversation_read', { conversation_id: conversation.id });
    expect(read.value.unread_count).toBe(0);
    expect(read.value).toEqual((await rest('GET', `/v1/conversations/${conversation.id}`)).body);
  });

  // Guarantee: the one private reply to a comment goes out over MCP with source "mcp".
  it('sends a private reply to a comment', async () => {
    const post = await rest('POST', '/v1/posts?wait=true', {
      workspace: w.id,
      caption: 'Bread',
      targets: [w.page],
    });
    const objectId = post.body.targets[0].platform_post_id as string;
    const comment = await stack.sandboxControl<{ id: string }>(
      'POST',
      `/__sandbox/pages/posts/${objectId}/comments`,
      {
        from: { name: 'Commenter' },
        text: 'Price?',
      },
    );
    const received = await eventually(() => {
      const event = recorder
        .ofType('comment.received')
        .find(
          (e) =>
            (e.data as { message: { platform_message_id: string } }).message.platform_message_id ===
            comment.id,
        );
      if (!event) throw new Error('no comment yet');
      return (event.data as { message: { id: string } }).message;
    });
    const reply = await callTool(mcp, 'send_private_reply', { message_id: received.id, text: 'DM us' });
    expect(reply.value).toMatchObject({ kind: 'private_reply', direction: 'outbound', source: 'mcp' });
    const twice = await callTool(mcp, 'send_private_reply', { message_id: received.id, text: 'again' });
    expect(twice.isError).toBe(true);
    expect(['conflict', 'unsupported']).toContain(twice.value.error.code);
  });
});

describe('refusals', () => {
  // Guarantee: a refused call is a tool result with isError and the spec's code and field,
  // never a protocol error or a stack trace.
  it('answers the error envelope with precise codes and fields', async () => {
    const cases: [string, Record<string, unknown>, Record<string, unknown>][] = [
      ['get_post', { post_id: 'post_00000000000000000000000000' }, { code: 'not_found' }],
      ['get_post', { post_id: '../etc' }, { code: 'not_found' }],
      ['create_post', { caption: 'x', targets: [] }, { code: 'validation_error', field: 'targets' }],
      [
        'create_post',
        { targets: [w.page], workspace: w.other },
        { code: 'validation_error', field: 'workspace' },
      ],
      ['list_posts', { limit: 500 }, { code: 'validation_error', field: 'limit' }],
      ['send_message', { conversation_id: 'conv_x', text: 5 }, { code: 'not_found' }],
      ['get_publishing_limit', { account_id: w.page }, { code: 'unsupported' }],
    ];
    for (const [tool, args, error] of cases) {
      const answer = await callTool(mcp, tool, args);
      expect(answer, `${tool} ${JSON.stringify(args)}`).toMatchObject({ isError: true, value: { error } });
      expect(JSON.stringify(answer.value)).not.toMatch(/at .*\.ts:\d+|node_modules/);
    }
  });
});

describe('isolation', () => {
  // Guarantee: a workspace key reaches its own workspace only: another workspace's objects are
  // not found, its lists are empty, and events stay partner-only.
  it('keeps a workspace key inside its workspace', async () => {
    const post = (
      await rest('POST', '/v1/posts', { workspace: w.id, caption: 'mine', targets: [w.page], draft: true })
    ).body;
    const stranger = await mcpClient(`${stack.gateway.url}/mcp`, { key: w.otherKey });
    try {
      for (const [tool, args] of [
        ['get_post', { post_id: post.id }],
        ['update_post', { post_id: post.id, caption: 'stolen' }],
        ['get_account', { account_id: w.page }],
      ] as const) {
        expect(await callTool(stranger, tool, args), tool).toMatchObject({
          isError: true,
          value: { error: { code: 'not_found' } },
        });
      }
      expect((await callTool(stranger, 'list_posts')).value.total).toBe(0);
      expect((await callTool(stranger, 'list_accounts')).value.total).toBe(0);
      expect(await callTool(stranger, 'create_post', { caption: 'x', targets: [w.page] })).toMatchObject({
        isError: true,
      });
      expect(await callTool(stranger, 'list_events')).toMatchObject({
        isError: true,
        value: { error: { code: 'forbidden' } },
      });
    } finally {
      await stranger.close();
    }
    const own = await mcpClient(`${stack.gateway.url}/mcp`, { key: w.ownKey });
    expect((await callTool(own, 'get_post', { post_id: post.id })).value.id).toBe(post.id);
    await own.close();
  });
});

describe('statelessness and revisions', () => {
  // Guarantee: any replica answers any request: one client alternating between two gateways
  // works, and no answer carries a session id.
  it('works against two gateways alternately', async () => {
    const second = await stack.startGateway();
    const bases = [stack.gateway.url, second.url];
    const counts = [0, 0];
    let sessionIds = 0;
    let turn = 0;
    const alternate: typeof fetch = async (input, init) => {
      const target = turn++ % 2;
      counts[target] = (counts[target] ?? 0) + 1;
      const url = String(input instanceof Request ? input.url : input).replace(
        stack.gateway.url,
        bases[target] ?? '',
      );
      const response = await fetch(url, init);
      if (response.headers.has('mcp-session-id')) sessionIds++;
      return response;
    };
    const post = (
      await rest('POST', '/v1/posts', {
        workspace: w.id,
        caption: 'replicas',
        targets: [w.page],
        draft: true,
      })
    ).body;
    const client = await mcpClient(`${stack.gateway.url}/mcp`, {
      key: partnerKey,
      workspace: w.id,
      fetch: alternate,
    });
    for (let i = 0; i < 4; i++) {
      expect((await callTool(client, 'get_post', { post_id: post.id })).value).toEqual(post);
    }
    expect((await client.listTools()).tools).toHaveLength(TOOLS.length);
    await client.close();
    expect(counts[0]).toBeGreaterThanOrEqual(3);
    expect(counts[1]).toBeGreaterThanOrEqual(3);
    expect(sessionIds).toBe(0);
  });

  // Guarantee: the three revisions are served: 2025-06-18 and 2025-11-25 through the initialize
  // handshake, 2026-07-28 per request (the SDK client pinned to it).
  it('negotiates 2025-06-18, 2025-11-25 and 2026-07-28', async () => {
    expect(mcp.getNegotiatedProtocolVersion()).toBe('2025-11-25');
    const older = await rpc('initialize', {
      protocolVersion: '2025-06-18',
      capabilities: {},
      clientInfo: { name: 'raw', version: '1' },
    });
    expect(older.result.protocolVersion).toBe('2025-06-18');
    const listed = await rpc('tools/list', {}, { 'mcp-protocol-version': '2025-06-18' });
    expect(listed.result.tools).toHaveLength(TOOLS.length);
    const unknown = await rpc('initialize', {
      protocolVersion: '2023-01-01',
      capabilities: {},
      clientInfo: { name: 'raw', version: '1' },
    });
    expect(unknown.result.protocolVersion).toBe('2025-11-25');

    const modern = await mcpClient(`${stack.gateway.url}/v1/mcp`, {
      key: partnerKey,
      workspace: w.id,
      era: 'modern',
    });
    expect(modern.getNegotiatedProtocolVersion()).toBe('2026-07-28');
    const viaModern = await callTool(modern, 'list_accounts');
    expect(viaModern.value).toEqual((await rest('GET', `/v1/workspaces/${w.id}/accounts`)).body);
    await modern.close();
  });
});

/** A raw body POSTed to /mcp as an MCP client would, with the partner key and the workspace. */
function postMcp(body: unknown, headers: Record<string, string> = {}) {
  return fetch(`${stack.gateway.url}/mcp`, {
    method: 'POST',
    headers: {
      authorization: `Bearer ${partnerKey}`,
      'x-service-workspace': w.id,
      'content-type': 'application/json',
      accept: 'application/json, text/event-stream',
      ...headers,
    },
    body: JSON.stringify(body),
  });
}

/** One raw JSON-RPC request over Streamable HTTP, its answer read from JSON or from the SSE frame. */
async function rpc(method: string, params: unknown, headers: Record<string, string> = {}) {
  const response = await postMcp({ jsonrpc: '2.0', id: 1, method, params }, headers);
  const text = await response.text();
  const json = text.trimStart().startsWith('{')
    ? text
    : (text.split('\n').find((l) => l.startsWith('data: ')) ?? '').slice(6);
  return JSON.parse(json);
}

describe('the 2025 exchange over HTTP', () => {
  const post = (body: unknown, headers: Record<string, string> = {}) =>
    postMcp(body, { 'mcp-protocol-version': '2025-11-25', ...headers });
  const call = (id: number, name: string, args: unknown) => ({
    jsonrpc: '2.0',
    id,
    method: 'tools/call',
    params: { name, arguments: args },
  });
  const refusalOf = async (response: Response) => ({
    status: response.status,
    code: ((await response.json()) as { error: { code: number } }).error.code,
  });

  // Guarantee: the Streamable HTTP rules of the 2025 revisions hold on the stateless JSON path
  // (as the SDK's transport answers them): both media types accepted, a known protocol version,
  // a batch of at most 100, one initialize alone, POST only; each refusal a JSON-RPC error.
  it('refuses what the 2025 transport refuses', async () => {
    const ping = { jsonrpc: '2.0', id: 1, method: 'ping' };
    expect(await refusalOf(await post(ping, { accept: 'application/json' }))).toEqual({
      status: 406,
      code: -32000,
    });
    expect(await refusalOf(await post(ping, { 'mcp-protocol-version': '2024-01-01' }))).toEqual({
      status: 400,
      code: -32000,
    });
    const many = Array.from({ length: 101 }, (_, i) => ({ ...ping, id: i }));
    expect(await refusalOf(await post(many))).toEqual({ status: 400, code: -32600 });
    const initialize = {
      jsonrpc: '2.0',
      id: 2,
      method: 'initialize',
      params: { protocolVersion: '2025-11-25', capabilities: {}, clientInfo: { name: 'raw', version: '1' } },
    };
    expect(await refusalOf(await post([initialize, ping]))).toEqual({ status: 400, code: -32600 });
    const get = await fetch(`${stack.gateway.url}/mcp`, {
      headers: { authorization: `Bearer ${partnerKey}`, 'x-service-workspace': w.id },
    });
    expect(get.status).toBe(405);
    expect(get.headers.get('allow')).toBe('POST');
  });

  // Guarantee: a notification alone is accepted with 202 and no body; a batch is answered with
  // every response in the order of its requests, each tool answering as alone; a repeated id is
  // answered once and a request the batch cancels is not waited for (neither holds the answer).
  it('accepts notifications and answers a batch in order', async () => {
    const notified = await post({ jsonrpc: '2.0', method: 'notifications/initialized' });
    expect(notified.status).toBe(202);
    expect(await notified.text()).toBe('');
    const listed = await rest('GET', `/v1/workspaces/${w.id}/accounts`);
    const batch = await post([call(7, 'list_accounts', {}), call(8, 'get_account', { account_id: w.page })]);
    expect(batch.status).toBe(200);
    const answers = (await batch.json()) as { id: number; result: { structuredContent: unknown } }[];
    expect(answers.map((a) => a.id)).toEqual([7, 8]);
    expect(answers[0]?.result.structuredContent).toEqual(listed.body);
    expect(answers[1]?.result.structuredContent).toEqual((await rest('GET', `/v1/accounts/${w.page}`)).body);
    const ping = { jsonrpc: '2.0', id: 3, method: 'ping' };
    expect(await (await post([ping, ping])).json()).toEqual([{ jsonrpc: '2.0', id: 3, result: {} }]);
    const cancel = { jsonrpc: '2.0', method: 'notifications/cancelled', params: { requestId: 3 } };
    expect((await post([ping, cancel])).status).toBe(202);
  });

  // Guarantee: a server built for one tool answers an unknown tool exactly as a full server
  // does (the SDK's answer for a tool it does not have), not "method not found".
  it('answers an unknown tool as a full server does', async () => {
    const response = await post(call(9, 'no_such_tool', {}));
    expect(response.status).toBe(200);
    expect(await response.json()).toEqual({
      jsonrpc: '2.0',
      id: 9,
      error: { code: -32602, message: 'Tool no_such_tool not found' },
    });
  });
});
