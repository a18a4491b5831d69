// `pnpm bench:mcp`: one read, "get post", through the MCP endpoint (a `tools/call` of get_post on
// POST /mcp, stateless: no session, no initialize) and through REST (GET /v1/posts/:id), in the
// same run, against the same gateway and services, each service in its own process. Prints req/s,
// p50 and p99 of each and the ratios against the targets of issue 16 (MCP throughput at least 60%
// of REST's, MCP p99 at most twice REST's), judged on the 2025-11-25 revision, the one most
// clients speak (a hand-written JSON-RPC body). The 2026-07-28 revision (the request the official
// client sends, recorded once) is measured beside it and reported, not judged: it is served by
// the SDK's own handler, whose web Request and Response per call it pays.
//
// Environment: BENCH_DURATION_S (default 10), BENCH_WARMUP_S (2), BENCH_CONNECTIONS (50),
// BENCH_RUN (`source`, or `bundle` to run the production bundles).
import { randomBytes } from 'node:crypto';
import { Client, StreamableHTTPClientTransport } from '@modelcontextprotocol/client';
import { api, connectThroughLink, createUser } from '@svc/testing';
import { buildBundles, type System, startSystem } from '@svc/testing/system';
import autocannon, { type Options, type Result } from 'autocannon';
import { cleanUpOnInterrupt, envVar } from './child.ts';
import { type BenchDatabase, createBenchDatabase } from './database.ts';

const DURATION_S = Number(envVar('BENCH_DURATION_S', '10'));
const WARMUP_S = Number(envVar('BENCH_WARMUP_S', '2'));
const CONNECTIONS = Number(envVar('BENCH_CONNECTIONS', '50'));
const RUN = envVar('BENCH_RUN', 'source') === 'bundle' ? 'bundle' : 'source';
const REDIS_URL = envVar('REDIS_URL', 'redis://127.0.0.1:6379');
const NATS_URL = envVar('NATS_URL', 'nats://127.0.0.1:4222');

const run = randomBytes(4).toString('hex');
const say = (line: string) => process.stderr.write(`${line}\n`);
let database: BenchDatabase | undefined;
let system: System | undefined;

interface Target {
  name: string;
  options: Options;
}

/** The system, a partner with the highest limit, a connected Page and a draft post to read. */
async function setUp(): Promise<{ rest: Target; mcps: (Target & { judged?: boolean })[] }> {
  database = await createBenchDatabase(`bench_mcp_${run}`, say);
  if (RUN === 'bundle') buildBundles();
  system = await startSystem({
    services: ['identity', 'accounts', 'publishing', 'gateway'],
    run: RUN,
    databaseUrl: database.url,
    prefix: `benchmcp${run}`,
    env: { LOG_LEVEL: 'warn', REDIS_URL, NATS_URL },
    logs: 'stderr',
  });
  const { key } = await system.createPartner(undefined, {
    name: 'Benchmark partner',
    limitPerMinute: 1_000_000,
  });
  const call = api(system.gatewayUrl, key);
  const workspace = (await call('POST', '/v1/workspaces', { name: 'bench' })).body.id as string;
  const stack = { sandbox: { url: system.addresses.sandboxUrl }, sandboxControl: system.sandboxControl };
  const user = await createUser(stack, [{ name: 'Bench Page' }]);
  const link = (await call('POST', `/v1/workspaces/${workspace}/connect-links`, {})).body;
  await connectThroughLink(stack, link.url, 'page_network', { userId: user.user.id, decision: 'approve' });
  const account = (await call('GET', `/v1/workspaces/${workspace}/accounts`)).body.data[0].id as string;
  const post = (
    await call('POST', '/v1/posts', { workspace, caption: 'bench', targets: [account], draft: true })
  ).body;
  const auth = { authorization: `Bearer ${key}` };
  const rest = {
    name: 'REST GET /v1/posts/:id',
    options: { url: `${system.gatewayUrl}/v1/posts/${post.id}`, headers: auth },
  };
  const mcpUrl = `${system.gatewayUrl}/mcp`;
  const mcpHeaders = { ...auth, 'x-service-workspace': workspace };
  const legacy = {
    name: 'MCP 2025-11-25 get_post',
    options: {
      url: mcpUrl,
      method: 'POST' as const,
      headers: {
        ...mcpHeaders,
        'content-type': 'application/json',
        accept: 'application/json, text/event-stream',
        'mcp-protocol-version': '2025-11-25',
      },
      body: JSON.stringify({
        jsonrpc: '2.0',
        id: 1,
        method: 'tools/call',
        params: { name: 'get_post', arguments: { post_id: post.id } },
      }),
    },
  };
  const modern = {
    name: 'MCP 2026-07-28 get_post',
    options: { url: mcpUrl, method: 'POST' as const, ...(await modernCall(mcpUrl, mcpHeaders, post.id)) },
  };
  for (const mcp of [legacy, modern]) await checkSameAnswer(rest, mcp, post);
  return { rest, mcps: [legacy, { ...modern, judged: false }] };
}

/** The request the official client sends for get_post on the 2026-07-28 revision, recorded once. */
async function modernCall(
  url: string,
  headers: Record<string, string>,
  postId: string,
): Promise<{ headers: Record<string, string>; body: string }> {
  let recorded: { headers: Record<string, string>; body: string } | undefined;
  const recording: typeof fetch = (input, init) => {
    const body = typeof init?.body === 'string' ? init.body : '';
    if (body.includes('"tools/call"'))
      recorded = { headers: Object.fromEntries(new Headers(init?.headers)), body };
    return fetch(input, init);
  };
  const transport = new StreamableHTTPClientTransport(new URL(url), {
    requestInit: { headers },
    fetch: recording,
  });
  const client = new Client(
    { name: 'bench', version: '1.0.0' },
    { versionNegotiation: { mode: { pin: '2026-07-28' } } },
  );
  await client.connect(transport);
  await client.callTool({ name: 'get_post', arguments: { post_id: postId } });
  await client.close();
  if (!recorded) throw new Error('the official client sent no tools/call');
  return recorded;
}

/** Both targets answer the post before anything is measured (a refusal would measure nothing). */
async function checkSameAnswer(rest: Target, mcp: Target, post: unknown): Promise<void> {
  const viaRest = await (await fetch(String(rest.options.url), { headers: rest.options.headers })).json();
  const response = await fetch(String(mcp.options.url), {
    method: 'POST',
    headers: mcp.options.headers,
    body: mcp.options.body as string,
  });
  const text = await response.text();
  const frame = text.trimStart().startsWith('{')
    ? text
    : (text.split('\n').find((l) => l.startsWith('data: ')) ?? '').slice(6);
  const viaMcp = (JSON.parse(frame) as { result?: { structuredContent?: unknown } }).result
    ?.structuredContent;
  const same = (a: unknown) => JSON.stringify(a) === JSON.stringify(post);
  if (!same(viaRest) || !same(viaMcp))
    throw new Error(`the targets do not answer the post: ${text.slice(0, 300)}`);
}

async function measure(target: Target): Promise<Result> {
  const options = { ...target.options, connections: CONNECTIONS };
  say(`▶ ${target.name}: warm-up ${WARMUP_S} s, then ${DURATION_S} s at ${CONNECTIONS} connections …`);
  await autocannon({ ...options, duration: WARMUP_S });
  return autocannon({ ...options, duration: DURATION_S });
}

const row = (name: string, r: Result) =>
  `${name.padEnd(26)} ${r.requests.average.toFixed(0).padStart(7)} req/s  p50 ${r.latency.p50.toFixed(1).padStart(6)} ms  p99 ${r.latency.p99.toFixed(1).padStart(6)} ms  non-2xx/errors ${r.non2xx + r.errors + r.timeouts}`;
const failures = (r: Result) => r.non2xx + r.errors + r.timeouts;

/** Prints each MCP revision against REST; true when every judged one meets both targets. */
function report(rest: Result, mcps: { name: string; judged: boolean; result: Result }[]): boolean {
  console.log(row('REST GET /v1/posts/:id', rest));
  for (const { name, result } of mcps) console.log(row(name, result));
  let met = failures(rest) === 0;
  for (const { name, judged, result } of mcps) {
    const throughput = result.requests.average / rest.requests.average;
    const tail = result.latency.p99 / Math.max(rest.latency.p99, 0.1);
    const ok = throughput >= 0.6 && tail <= 2 && failures(result) === 0;
    if (judged) met &&= ok;
    const verdict = judged ? (ok ? 'met' : 'NOT met') : 'reported, not judged';
    console.log(
      `${name}: MCP/REST throughput ${(throughput * 100).toFixed(0)}% (target ≥ 60%), p99 ${tail.toFixed(2)}× (target ≤ 2×): ${verdict}`,
    );
  }
  console.log(
    `(${CONNECTIONS} connections, ${DURATION_S} s each, services run from ${RUN}; the machine is shared: compare ratios, not absolute figures)`,
  );
  return met;
}

async function cleanup(): Promise<void> {
  await system?.stop().catch((error) => say(`stopping the system failed: ${String(error)}`));
  await database?.drop().catch((error) => say(`dropping the database failed: ${String(error)}`));
}

cleanUpOnInterrupt(cleanup);

try {
  const { rest, mcps } = await setUp();
  const restResult = await measure(rest);
  const mcpResults = [];
  for (const mcp of mcps)
    mcpResults.push({ name: mcp.name, judged: mcp.judged ?? true, result: await measure(mcp) });
  process.exitCode = report(restResult, mcpResults) ? 0 : 1;
} finally {
  await cleanup();
}
