import { createServer, type IncomingHttpHeaders, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { GraphClient } from '@svc/graph-client';
import { type RunningSandbox, type SandboxConfig, sandboxConfig, startSandbox } from '../../src/index.ts';

/**
 * The product's client (@svc/graph-client) against the real sandbox in-process on port 0, plus a
 * small "internet": image fixtures the sandbox fetches, and a webhook receiver that keeps the raw
 * bytes Meta would send. These contract tests live with the sandbox, not the client, so the
 * client's package needs no development tool to be tested.
 */
export const APP_SECRET = 'contract-test-app-secret-0123456789';

function jpeg(width: number, height: number): Buffer {
  const app0 = [
    0xff, 0xe0, 0x00, 0x10, 0x4a, 0x46, 0x49, 0x46, 0x00, 0x01, 0x01, 0x00, 0x00, 0x01, 0x00, 0x01, 0x00,
    0x00,
  ];
  const sof = [
    0xff,
    0xc0,
    0x00,
    0x11,
    0x08,
    height >> 8,
    height & 0xff,
    width >> 8,
    width & 0xff,
    0x03,
    0x01,
    0x22,
    0x00,
    0x02,
    0x11,
    0x01,
    0x03,
    0x11,
    0x01,
  ];
  return Buffer.from([0xff, 0xd8, ...app0, ...sof, 0xff, 0xd9]);
}

interface Received {
  method: string;
  url: string;
  headers: IncomingHttpHeaders;
  raw: Buffer;
}

interface Internet {
  url: string;
  received: Received[];
  /** Handler for GETs to /webhook (the verification handshake); default 404. */
  onVerify: ((query: Record<string, unknown>) => { status: number; body: string }) | null;
  close(): Promise<void>;
}

async function startInternet(): Promise<Internet> {
  const internet: Internet = { url: '', received: [], onVerify: null, close: async () => {} };
  const server: Server = createServer((req, res) => {
    const chunks: Buffer[] = [];
    req.on('data', (c: Buffer) => chunks.push(c));
    req.on('end', () => {
      const url = new URL(req.url ?? '/', 'http://x');
      if (url.pathname === '/img/square.jpg')
        return res.writeHead(200, { 'content-type': 'image/jpeg' }).end(jpeg(1080, 1080));
      if (url.pathname === '/img/portrait.jpg')
        return res.writeHead(200, { 'content-type': 'image/jpeg' }).end(jpeg(1080, 1350));
      if (url.pathname === '/img/tall.jpg')
        return res.writeHead(200, { 'content-type': 'image/jpeg' }).end(jpeg(1080, 1920));
      if (url.pathname === '/page.html')
        return res.writeHead(200, { 'content-type': 'text/html' }).end('<html>hi</html>');
      if (req.method === 'GET' && url.pathname === '/webhook' && internet.onVerify) {
        const answer = internet.onVerify(Object.fromEntries(url.searchParams));
        return res.writeHead(answer.status, { 'content-type': 'text/plain' }).end(answer.body);
      }
      if (req.method === 'POST') {
        internet.received.push({
          method: req.method,
          url: req.url ?? '',
          headers: req.headers,
          raw: Buffer.concat(chunks),
        });
        return res.writeHead(200).end('ok');
      }
      res.writeHead(404).end('not found');
    });
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  internet.url = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
  internet.close = () => new Promise((resolve) => server.close(() => resolve()));
  return internet;
}

export interface Harness {
  sandbox: RunningSandbox;
  internet: Internet;
  client: GraphClient;
  /** A new client in place of `client`: without what Meta told the old one (usage, outage). */
  renewClient(): Promise<void>;
  sleeps: number[];
  control<T = Record<string, unknown>>(
    method: string,
    path: string,
    body?: unknown,
  ): Promise<{ status: number; body: T }>;
  close(): Promise<void>;
}

export async function startHarness(
  overrides: Partial<SandboxConfig> = {},
  clientTimeoutMs = 2000,
): Promise<Harness> {
  const internet = await startInternet();
  const config = sandboxConfig({
    port: 0,
    appSecret: APP_SECRET,
    webhookUrl: `${internet.url}/webhook`,
    deauthorizeUrl: `${internet.url}/deauthorize`,
    containerProcessingMs: 0,
    webhookRetries: 0,
    logLevel: 'silent',
    ...overrides,
  });
  const sandbox = await startSandbox(config);
  const sleeps: number[] = [];
  const newClient = () =>
    new GraphClient({
      baseUrl: sandbox.url,
      apiVersion: 'v25.0',
      dialogBaseUrl: sandbox.url,
      appId: config.appId,
      appSecret: APP_SECRET,
      timeoutMs: clientTimeoutMs,
      retry: { maxAttempts: 3, baseDelayMs: 100, maxDelayMs: 1000 },
      sleep: async (ms) => {
        sleeps.push(ms);
      },
      random: () => 0.5,
    });
  const control = async <T>(method: string, path: string, body?: unknown) => {
    const res = await fetch(`${sandbox.url}${path}`, {
      method,
      headers: body === undefined ? {} : { 'content-type': 'application/json' },
      body: body === undefined ? undefined : JSON.stringify(body),
    });
    return { status: res.status, body: (await res.json()) as T };
  };
  const harness: Harness = {
    sandbox,
    internet,
    client: newClient(),
    async renewClient() {
      await harness.client.close();
      harness.client = newClient();
    },
    sleeps,
    control,
    close: async () => {
      await sandbox.close();
      await internet.close();
    },
  };
  return harness;
}

export const ALL_SCOPES = [
  'pages_show_list',
  'pages_read_engagement',
  'pages_manage_posts',
  'pages_manage_engagement',
  'pages_manage_metadata',
  'pages_messaging',
  'business_management',
  'instagram_basic',
  'instagram_content_publish',
  'instagram_manage_comments',
  'instagram_manage_messages',
];

export interface Connected {
  userId: string;
  userToken: string;
  pageId: string;
  pageToken: string;
  igId: string;
}

/** A user goes through the consent form (as the browser would post it) and the product finishes the login. */
export async function connectUser(h: Harness, scopes = ALL_SCOPES): Promise<Connected> {
  const created = await h.control<{
    user: { id: string };
    pages: { id: string; instagram: { id: string } }[];
  }>('POST', '/__sandbox/users', {
    name: 'Jane',
    pages: [{ name: 'Acme Bakery', instagram: { username: 'acmebakery' } }],
  });
  const redirectUri = `${h.internet.url}/callback`;
  const form = new URLSearchParams({
    client_id: h.client.config.appId,
    redirect_uri: redirectUri,
    state: 's1',
    scope: scopes.join(','),
    user_id: created.body.user.id,
    decision: 'approve',
  });
  const consent = await fetch(`${h.sandbox.url}/__sandbox/consent`, {
    method: 'POST',
    body: form,
    redirect: 'manual',
  });
  const code = new URL(consent.headers.get('location') ?? '').searchParams.get('code') ?? '';
  const short = await h.client.oauth.exchangeCode({ code, redirectUri });
  const long = await h.client.oauth.exchangeForLongLived(short.access_token);
  const [page] = await h.client.accounts.pages(long.access_token);
  if (!page?.access_token || !page.instagram_business_account)
    throw new Error('connectUser: no page token / instagram account');
  return {
    userId: created.body.user.id,
    userToken: long.access_token,
    pageId: page.id,
    pageToken: page.access_token,
    igId: page.instagram_business_account.id,
  };
}

/** Runs `fn` and returns the error it throws (fails the test if nothing is thrown). */
export async function failure<E = unknown>(fn: () => Promise<unknown>): Promise<E> {
  try {
    await fn();
  } catch (error) {
    return error as E;
  }
  throw new Error('expected the call to fail, but it succeeded');
}
