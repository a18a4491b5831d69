import { createServer, type Server } from 'node:http';
import { api, connectThroughLink, createUser, eventually, Receiver } from '@svc/testing';
import { type Stack, startStack } from '@svc/testing/stack';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { PERMISSIONS } from '../src/auth/permissions.ts';
import type { ServiceClients } from '../src/clients.ts';
import { type Tool, toolsOf } from '../src/mcp/tool.ts';
import { httpRoutes, operationTable } from '../src/operations/table.ts';
import { callTool, mcpClient } from './mcp-client.ts';

/**
 * Spec section 5, transcribed independently of the gateway's own table: for every route, the
 * expected status per caller. Callers: partner key, a workspace key of the workspace in the path,
 * a workspace key of another workspace, an embed session of the workspace in the path, no token.
 * An embed session reaches `/v1/embed/*` only: 403 on every route here. The `/v1/embed/*` routes,
 * and expired and ended sessions on every route, are walked in permissions-embed.test.ts.
 */
type Caller = 'partner' | 'ownWorkspace' | 'otherWorkspace' | 'embed' | 'none';
const EXPECTED: Record<string, Record<Caller, [number, string?]>> = {
  'POST /v1/workspaces': row(201, [403, 'forbidden'], [403, 'forbidden']),
  'GET /v1/workspaces': row(200, [403, 'forbidden'], [403, 'forbidden']),
  'GET /v1/workspaces/:id': row(200, [200], [403, 'forbidden']),
  'PATCH /v1/workspaces/:id': row(200, [200], [403, 'forbidden']),
  'DELETE /v1/workspaces/:id': row(204, [204], [403, 'forbidden']),
  'POST /v1/workspaces/:id/keys': row(201, [403, 'forbidden'], [403, 'forbidden']),
  'GET /v1/workspaces/:id/keys': row(200, [403, 'forbidden'], [403, 'forbidden']),
  'DELETE /v1/workspaces/:id/keys/:key_id': row(204, [403, 'forbidden'], [403, 'forbidden']),
  'POST /v1/workspaces/:id/connect-links': row(201, [201], [403, 'forbidden']),
  'GET /v1/workspaces/:id/accounts': row(200, [200], [403, 'forbidden']),
  'GET /v1/accounts/:id': row(200, [200], [404, 'not_found']),
  'DELETE /v1/accounts/:id': row(204, [204], [404, 'not_found']),
  'POST /v1/accounts/:id/refresh': row(200, [200], [404, 'not_found']),
  'POST /v1/media': row(201, [201], [403, 'forbidden']),
  'GET /v1/media': row(200, [200], [403, 'forbidden']),
  'GET /v1/media/:id': row(200, [200], [404, 'not_found']),
  'DELETE /v1/media/:id': row(204, [204], [404, 'not_found']),
  'POST /v1/posts': row(201, [201], [403, 'forbidden']),
  'GET /v1/posts': row(200, [200], [200]),
  'GET /v1/posts/:id': row(200, [200], [404, 'not_found']),
  'PATCH /v1/posts/:id': row(200, [200], [404, 'not_found']),
  'POST /v1/posts/:id/publish': row(200, [200], [404, 'not_found']),
  // The fixture's account is a Page: the limit is the photo network's, hence 400 unsupported.
  'GET /v1/accounts/:id/publishing-limit': row(400, [400], [404, 'not_found']),
  'PUT /v1/webhook': row(200, [403, 'forbidden'], [403, 'forbidden']),
  'GET /v1/webhook': row(200, [403, 'forbidden'], [403, 'forbidden']),
  'DELETE /v1/webhook': row(204, [403, 'forbidden'], [403, 'forbidden']),
  'POST /v1/webhook/test': row(200, [403, 'forbidden'], [403, 'forbidden']),
  'GET /v1/events': row(200, [403, 'forbidden'], [403, 'forbidden']),
  'GET /v1/events/:id/deliveries': row(200, [403, 'forbidden'], [403, 'forbidden']),
  'POST /v1/events/:id/redeliver': row(200, [403, 'forbidden'], [403, 'forbidden']),
  'GET /v1/conversations': row(200, [200], [200]),
  'GET /v1/conversations/:id': row(200, [200], [404, 'not_found']),
  'PATCH /v1/conversations/:id': row(200, [200], [404, 'not_found']),
  'GET /v1/conversations/:id/messages': row(200, [200], [404, 'not_found']),
  'POST /v1/conversations/:id/messages': row(201, [201], [404, 'not_found']),
  // The fixture's message is a direct message: a private reply answers comments, hence 400 unsupported.
  'POST /v1/messages/:id/private-reply': row(400, [400], [404, 'not_found']),
  'POST /v1/accounts/:id/inbox-sync': row(200, [200], [404, 'not_found']),
  'POST /v1/embed-sessions': row(201, [403, 'forbidden'], [403, 'forbidden']),
  'GET /v1/embed-sessions': row(200, [403, 'forbidden'], [403, 'forbidden']),
  'DELETE /v1/embed-sessions/:id': row(204, [403, 'forbidden'], [403, 'forbidden']),
};

function row(
  partner: number,
  own: [number, string?],
  other: [number, string?],
): Record<Caller, [number, string?]> {
  return {
    partner: [partner],
    ownWorkspace: own,
    otherWorkspace: other,
    embed: [403, 'forbidden'],
    none: [401, 'unauthorized'],
  };
}

const BODIES: Record<string, unknown> = {
  'POST /v1/workspaces': { name: 'matrix' },
  'PATCH /v1/workspaces/:id': { name: 'renamed' },
  'POST /v1/workspaces/:id/keys': { label: 'matrix' },
  'PUT /v1/webhook': { url: 'http://127.0.0.1:9/matrix' },
  // `:own` and `:account` are the fixtures' workspace and connected account.
  'POST /v1/posts': { workspace: ':own', caption: 'matrix', targets: [':account'], draft: true },
  'PATCH /v1/posts/:id': { caption: 'renamed' },
  'PATCH /v1/conversations/:id': { read: true },
  'POST /v1/conversations/:id/messages': { text: 'matrix' },
  'POST /v1/messages/:id/private-reply': { text: 'matrix' },
  'POST /v1/embed-sessions': { workspace: ':own', allowed_origins: ['https://app.partner.example'] },
  // `:pixel` is a small PNG on a local file server (private addresses are allowed in development).
  'POST /v1/media': { workspace: ':own', url: ':pixel' },
};

/** Query strings, with the same placeholders as the bodies. */
const QUERIES: Record<string, string> = {
  'GET /v1/media': '?workspace=:own',
};

/** A 1x1 PNG. */
const PIXEL = Buffer.from(
  'iVBORw0KGgoAAAANSUhEUgAAAAEAAAABCAYAAAAfFcSJAAAADUlEQVR42mNk+M9QDwADhgGAWjR9awAAAABJRU5ErkJggg==',
  'base64',
);
let pixelServer: Server;
let pixelUrl: string;

let stack: Stack;
let partnerKey: string;
let receiver: Receiver;

beforeAll(async () => {
  // Fixtures connect accounts through the hosted pages: lift the per-IP limit (tested elsewhere).
  stack = await startStack({ UNAUTHENTICATED_LIMIT_PER_MINUTE: '100000' });
  receiver = await Receiver.start();
  pixelServer = createServer((_req, res) => res.end(PIXEL));
  await new Promise<void>((resolve) => pixelServer.listen(0, '127.0.0.1', resolve));
  pixelUrl = `http://127.0.0.1:${(pixelServer.address() as { port: number }).port}/pixel.png`;
  const partner = await stack.createPartner();
  partnerKey = partner.key;
  // Each case builds fresh fixtures with the partner key: far more than 300 calls a minute.
  await stack.identity.prisma.partner.update({
    where: { id: partner.partnerId },
    data: { rateLimitPerMinute: 100_000 },
  });
});
afterAll(async () => {
  await stack.stop();
  await receiver.close();
  pixelServer.closeAllConnections();
  await new Promise((resolve) => pixelServer.close(resolve));
});

/** Fresh fixtures per call, so destructive routes never disturb the next row. */
async function fixtures() {
  const partner = api(stack.gateway.url, partnerKey);
  const own = (await partner('POST', '/v1/workspaces', { name: 'own' })).body.id as string;
  const other = (await partner('POST', '/v1/workspaces', { name: 'other' })).body.id as string;
  const ownKey = (await partner('POST', `/v1/workspaces/${own}/keys`, { label: 'own' })).body;
  const otherKey = (await partner('POST', `/v1/workspaces/${other}/keys`, { label: 'other' })).body;
  const victim = (await partner('POST', `/v1/workspaces/${own}/keys`, { label: 'victim' })).body.id as string;
  const account = await connectedAccount(partner, own);
  const event = await deliveredEvent(partner);
  const media = (await partner('POST', '/v1/media', { workspace: own, url: pixelUrl })).body.id as string;
  const { conversation, message } = await inboundMessage(partner, account);
  const draft = (
    await partner('POST', '/v1/posts', { workspace: own, caption: 'matrix', targets: [account], draft: true })
  ).body.id as string;
  const session = (
    await partner('POST', '/v1/embed-sessions', { workspace: own, allowed_origins: ['https://a.example'] })
  ).body;
  const tokens: Record<Caller, string | undefined> = {
    partner: partnerKey,
    ownWorkspace: ownKey.key,
    otherWorkspace: otherKey.key,
    embed: session.token,
    none: undefined,
  };
  const idIn = (url: string) =>
    url.startsWith('/v1/conversations/')
      ? conversation
      : url.startsWith('/v1/messages/')
        ? message
        : idOfOther(url);
  const idOfOther = (url: string) =>
    url.startsWith('/v1/accounts/')
      ? account
      : url.startsWith('/v1/events/')
        ? event
        : url.startsWith('/v1/posts/')
          ? draft
          : url.startsWith('/v1/media/')
            ? media
            : url.startsWith('/v1/embed-sessions/')
              ? session.id
              : own;
  const path = (url: string) => url.replace(':id', idIn(url)).replace(':key_id', victim);
  const body = (value: unknown) =>
    value === undefined
      ? undefined
      : JSON.parse(
          JSON.stringify(value)
            .replaceAll('":own"', `"${own}"`)
            .replaceAll('":account"', `"${account}"`)
            .replaceAll('":pixel"', `"${pixelUrl}"`),
        );
  const query = (value: string | undefined) => (value ?? '').replaceAll(':own', own);
  return { path, tokens, body, query };
}

/** An account of the workspace, connected through the real flow (the sandbox's consent). */
async function connectedAccount(partner: ReturnType<typeof api>, workspaceId: string): Promise<string> {
  const user = await createUser(stack, [{ name: 'Matrix Page' }]);
  const link = (await partner('POST', `/v1/workspaces/${workspaceId}/connect-links`, {})).body;
  await connectThroughLink(stack, link.url, 'page_network', { userId: user.user.id, decision: 'approve' });
  return (await partner('GET', `/v1/workspaces/${workspaceId}/accounts`)).body.data[0].id;
}

/** A direct message to the account from a person, as the inbox recorded it. */
async function inboundMessage(partner: ReturnType<typeof api>, accountId: string) {
  const account = (await partner('GET', `/v1/accounts/${accountId}`)).body;
  await stack.sandboxControl('POST', `/__sandbox/pages/${account.platform_id}/messages`, {
    from: { name: 'Matrix Person' },
    text: 'matrix',
  });
  return eventually(async () => {
    const [conversation] = (await partner('GET', `/v1/conversations?account=${accountId}`)).body.data;
    if (!conversation) return undefined;
    const [message] = (await partner('GET', `/v1/conversations/${conversation.id}/messages`)).body.data;
    return message ? { conversation: conversation.id as string, message: message.id as string } : undefined;
  });
}

/** A delivered event of the partner (a test ping to a live receiver); leaves the webhook set. */
async function deliveredEvent(partner: ReturnType<typeof api>): Promise<string> {
  await partner('PUT', '/v1/webhook', { url: receiver.url });
  return (await partner('POST', '/v1/webhook/test')).body.event_id;
}

describe('permission matrix', () => {
  const routes = httpRoutes(operationTable({} as ServiceClients)).filter(
    (r) => !r.url.startsWith('/v1/embed/'),
  );

  // Guarantee: no route exists without a row in the expected matrix.
  it('has an expectation for every route', () => {
    expect(routes.map((r) => `${r.method} ${r.url}`).sort()).toEqual(Object.keys(EXPECTED).sort());
  });

  for (const route of routes) {
    const name = `${route.method} ${route.url}`;
    for (const caller of ['partner', 'ownWorkspace', 'otherWorkspace', 'embed', 'none'] as Caller[]) {
      // Guarantee: the exact status and error code of spec section 5 for this route and caller.
      it(`${name} as ${caller}`, async () => {
        const { path, tokens, body, query } = await fixtures();
        const expected = EXPECTED[name]?.[caller];
        const res = await api(stack.gateway.url, tokens[caller])(
          route.method,
          path(route.url) + query(QUERIES[name]),
          body(BODIES[name]),
        );
        expect(res.status).toBe(expected?.[0]);
        if (expected?.[1]) expect(res.body.error.code).toBe(expected[1]);
      });
    }
  }
});

/** One MCP request (a 2025 `initialize`), as any MCP client opens. */
function mcpInitialize(token: string | undefined, workspace?: string) {
  return fetch(`${stack.gateway.url}/mcp`, {
    method: 'POST',
    headers: {
      'content-type': 'application/json',
      accept: 'application/json, text/event-stream',
      ...(token ? { authorization: `Bearer ${token}` } : {}),
      ...(workspace ? { 'x-service-workspace': workspace } : {}),
    },
    body: JSON.stringify({
      jsonrpc: '2.0',
      id: 1,
      method: 'initialize',
      params: {
        protocolVersion: '2025-11-25',
        capabilities: {},
        clientInfo: { name: 'matrix', version: '1' },
      },
    }),
  });
}

describe('permission matrix: /mcp', () => {
  // Guarantee: the `/mcp` row of spec section 5: a partner key with X-Service-Workspace, a
  // workspace key in its own workspace; an embed session is refused (403), no token is 401.
  it('answers each caller as the /mcp row says', async () => {
    const { tokens, path } = await fixtures();
    const own = path('/v1/workspaces/:id').split('/').pop();
    const cases: [Caller, string | undefined, number, string?][] = [
      ['partner', own, 200],
      ['partner', undefined, 400, 'validation_error'],
      ['ownWorkspace', undefined, 200],
      ['ownWorkspace', own, 200],
      ['otherWorkspace', own, 403, 'forbidden'],
      ['embed', own, 403, 'forbidden'],
      ['none', own, 401, 'unauthorized'],
    ];
    for (const [caller, workspace, status, code] of cases) {
      const response = await mcpInitialize(tokens[caller], workspace);
      expect(response.status, `${caller} ${workspace ?? ''}`).toBe(status);
      if (code) expect(((await response.json()) as { error: { code: string } }).error.code).toBe(code);
    }
  });
});

/** The arguments of a tool from the REST fixtures of its operation: query, body, path id. */
function toolArguments(tool: Tool, fixture: Awaited<ReturnType<typeof fixtures>>): Record<string, unknown> {
  const name = `${tool.operation.method} ${tool.operation.url}`;
  const fromQuery = Object.fromEntries(new URLSearchParams(fixture.query(QUERIES[name])));
  const args: Record<string, unknown> = { ...fromQuery, ...(fixture.body(BODIES[name]) ?? {}) };
  for (const name of [...Object.keys(args)]) if (!tool.partOf.has(name)) delete args[name];
  if (tool.door.idArg) args[tool.door.idArg] = fixture.path(tool.operation.url).split('/')[3];
  return args;
}

describe('permission matrix: MCP tools', () => {
  const tools = toolsOf(operationTable({} as ServiceClients));

  for (const tool of tools) {
    const name = `${tool.operation.method} ${tool.operation.url}`;
    // Guarantee: every tool, derived from its operation, answers a partner key and a workspace
    // key as its REST route does (the same success, or the same error code), and a key of another
    // workspace reaches none of the workspace's objects (not_found) nor a partner-only operation.
    it(`${tool.door.name} (${name}) answers each key as its REST route`, async () => {
      const fixture = await fixtures();
      const rest = EXPECTED[name];
      for (const caller of ['partner', 'ownWorkspace'] as const) {
        // A write (publish, delete) is tried on fixtures of its own, as each REST row is.
        if (caller === 'ownWorkspace' && !tool.door.readOnly) Object.assign(fixture, await fixtures());
        const args = toolArguments(tool, fixture);
        const own = fixture.path('/v1/workspaces/:id').split('/').pop() as string;
        const client = await mcpClient(`${stack.gateway.url}/mcp`, {
          key: fixture.tokens[caller] as string,
          workspace: caller === 'partner' ? own : undefined,
        });
        const answer = await callTool(client, tool.door.name, args);
        await client.close();
        const [status, code] = rest?.[caller] ?? [];
        expect(answer.isError, `${caller}: ${JSON.stringify(answer.value)}`).toBe((status ?? 0) >= 400);
        if (code) expect(answer.value.error.code).toBe(code);
      }
      const other = await mcpClient(`${stack.gateway.url}/mcp`, {
        key: fixture.tokens.otherWorkspace as string,
      });
      const fromOther = await callTool(other, tool.door.name, toolArguments(tool, fixture));
      await other.close();
      if (PERMISSIONS[tool.operation.permission].workspace === 'deny')
        expect(fromOther.value.error.code).toBe('forbidden');
      else if (tool.door.idArg) expect(fromOther.value.error.code).toBe('not_found');
    });
  }
});
