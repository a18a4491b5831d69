import { execFile } from 'node:child_process';
import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { promisify } from 'node:util';
import { api } from '@svc/testing';
import { type Stack, startStack } from '@svc/testing/stack';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';

/**
 * Who may reach the MCP endpoint (spec 5, `/mcp` row) and at what rate (spec 8), checked at the
 * HTTP level before anything MCP runs; then a second, independent client (the MCP Inspector's
 * CLI) against the running gateway.
 */
let stack: Stack;
let partnerKey: string;
let own: string;
let ownKey: string;
let foreign: string;
let scratch: string;

beforeAll(async () => {
  stack = await startStack();
  partnerKey = (await stack.createPartner()).key;
  const rest = api(stack.gateway.url, partnerKey);
  own = (await rest('POST', '/v1/workspaces', { name: 'mcp access' })).body.id;
  ownKey = (await rest('POST', `/v1/workspaces/${own}/keys`, { label: 'agent' })).body.key;
  const stranger = await stack.createPartner();
  foreign = (await api(stack.gateway.url, stranger.key)('POST', '/v1/workspaces', { name: 'theirs' })).body
    .id;
  scratch = await mkdtemp(path.join(tmpdir(), 'mcp-inspector-'));
});
afterAll(async () => {
  await stack?.stop();
  await rm(scratch, { recursive: true, force: true });
});

/** A raw 2025 `initialize` (what any MCP client sends first) with the given headers. */
function initialize(headers: Record<string, string>, url = `${stack.gateway.url}/mcp`) {
  return fetch(url, {
    method: 'POST',
    headers: {
      'content-type': 'application/json',
      accept: 'application/json, text/event-stream',
      ...headers,
    },
    body: JSON.stringify({
      jsonrpc: '2.0',
      id: 1,
      method: 'initialize',
      params: { protocolVersion: '2025-11-25', capabilities: {}, clientInfo: { name: 'raw', version: '1' } },
    }),
  });
}

const bearer = (key: string) => ({ authorization: `Bearer ${key}` });

describe('authentication', () => {
  // Guarantee: the `/mcp` row of the matrix, refusals in the error envelope before anything MCP:
  // partner key needs X-Service-Workspace of its own workspaces, a workspace key its own
  // workspace, an embed session is refused, a missing or unknown key asks for a Bearer token.
  it('answers each caller as the matrix says', async () => {
    const cases: [string, Record<string, string>, number, string?, string?][] = [
      ['partner key, own workspace', { ...bearer(partnerKey), 'x-service-workspace': own }, 200],
      ['partner key, no workspace', bearer(partnerKey), 400, 'validation_error', 'X-Service-Workspace'],
      [
        'partner key, malformed workspace',
        { ...bearer(partnerKey), 'x-service-workspace': 'nope' },
        400,
        'validation_error',
        'X-Service-Workspace',
      ],
      [
        "partner key, another partner's workspace",
        { ...bearer(partnerKey), 'x-service-workspace': foreign },
        403,
        'forbidden',
      ],
      ['workspace key', bearer(ownKey), 200],
      ['workspace key naming its workspace', { ...bearer(ownKey), 'x-service-workspace': own }, 200],
      [
        'workspace key naming another',
        { ...bearer(ownKey), 'x-service-workspace': foreign },
        403,
        'forbidden',
      ],
      ['embed session', bearer(`sve_${'a'.repeat(40)}`), 403, 'forbidden'],
      ['unknown key', bearer(`svc_live_${'x'.repeat(40)}`), 401, 'unauthorized'],
      ['no key', {}, 401, 'unauthorized'],
    ];
    for (const [name, headers, status, code, field] of cases) {
      for (const url of [`${stack.gateway.url}/mcp`, `${stack.gateway.url}/v1/mcp`]) {
        const response = await initialize(headers, url);
        const text = await response.text();
        expect(response.status, `${name} at ${url}: ${text}`).toBe(status);
        if (code) expect(JSON.parse(text).error, name).toMatchObject(field ? { code, field } : { code });
        if (status === 401) expect(response.headers.get('www-authenticate'), name).toMatch(/^Bearer/);
        expect(response.headers.get('mcp-session-id'), name).toBeNull();
      }
    }
  });

  // Guarantee: every MCP request counts in the key's per-minute budget, shared with REST; over it
  // the answer is 429 rate_limited with Retry-After, before anything MCP runs.
  it('counts MCP requests in the key budget', async () => {
    const limited = await stack.createPartner();
    const rest = api(stack.gateway.url, limited.key);
    const workspace = (await rest('POST', '/v1/workspaces', { name: 'limited' })).body.id;
    const { setPartnerLimit } = await import('@svc/identity/admin');
    const { AuthCache } = await import('@svc/auth-cache');
    const slug = (await stack.identity.prisma.partner.findUniqueOrThrow({ where: { id: limited.partnerId } }))
      .slug;
    await setPartnerLimit(
      stack.identity.prisma,
      new AuthCache(stack.gateway.redis, `${stack.prefix}:`),
      slug,
      4,
    );
    const headers = { ...bearer(limited.key), 'x-service-workspace': workspace };
    const statuses: number[] = [];
    for (let i = 0; i < 6; i++) statuses.push((await initialize(headers)).status);
    // The workspace creation above counted too: a few pass, then every one is refused.
    expect(statuses.slice(0, 2)).toEqual([200, 200]);
    expect(statuses.slice(4)).toEqual([429, 429]);
    const refused = await initialize(headers);
    expect(refused.status).toBe(429);
    expect(Number(refused.headers.get('retry-after'))).toBeGreaterThanOrEqual(1);
    expect(((await refused.json()) as { error: { code: string } }).error.code).toBe('rate_limited');
    // The same budget as REST: REST is refused too now.
    expect((await rest('GET', '/v1/workspaces')).status).toBe(429);
  });
});

/** The Inspector's bin, as the gateway's devDependency installs it (its `inspector` script). */
const INSPECTOR = path.join(
  fileURLToPath(new URL('..', import.meta.url)),
  'node_modules',
  '.bin',
  'mcp-inspector',
);

/** The MCP Inspector's CLI mode against the gateway; answers its JSON output. */
async function inspector(args: string[]): Promise<{ code: number; json: unknown; stderr: string }> {
  const base = [
    '--cli',
    `${stack.gateway.url}/mcp`,
    '--transport',
    'http',
    '--header',
    `Authorization: Bearer ${partnerKey}`,
    '--header',
    `X-Service-Workspace: ${own}`,
  ];
  try {
    const { stdout, stderr } = await promisify(execFile)(INSPECTOR, [...base, ...args], {
      env: { ...process.env, MCP_CATALOG_PATH: path.join(scratch, 'mcp.json'), NO_COLOR: '1' },
      timeout: 60_000,
    });
    return { code: 0, json: JSON.parse(stdout), stderr };
  } catch (error) {
    const failed = error as { code?: number; stdout?: string; stderr?: string };
    return { code: failed.code ?? 1, json: failed.stdout, stderr: failed.stderr ?? '' };
  }
}

describe('a second client: the MCP Inspector CLI', () => {
  // Guarantee: an independent client lists the tools (with its strict schema portability check)
  // and calls one, reading the same answer as REST; a refusal reaches it as isError.
  it('lists the tools strictly and calls one', async () => {
    const listed = await inspector(['--method', 'tools/list', '--strict']);
    expect(listed.code, listed.stderr).toBe(0);
    const names = (listed.json as { tools: { name: string }[] }).tools.map((t) => t.name);
    expect(names).toContain('get_post');
    expect(names.length).toBeLessThanOrEqual(25);

    const rest = api(stack.gateway.url, partnerKey);
    const accounts = (await rest('GET', `/v1/workspaces/${own}/accounts`)).body;
    const called = await inspector(['--method', 'tools/call', '--tool-name', 'list_accounts']);
    expect(called.code, called.stderr).toBe(0);
    expect((called.json as { structuredContent: unknown }).structuredContent).toEqual(accounts);

    const refused = await inspector([
      '--method',
      'tools/call',
      '--tool-name',
      'get_post',
      '--tool-arg',
      'post_id=post_00000000000000000000000000',
    ]);
    // A tool result with isError: the CLI exits non-zero and shows the envelope's code.
    expect(`${JSON.stringify(refused.json)} ${refused.stderr}`).toContain('not_found');
  });
});
