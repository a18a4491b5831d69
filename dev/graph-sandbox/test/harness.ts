import { readFile } from 'node:fs/promises';
import { createServer, type IncomingHttpHeaders, type ServerResponse } from 'node:http';
import type { AddressInfo } from 'node:net';
// The shared test videos; imported by path because @svc/testing itself depends on the sandbox.
import { type VideoFixture, videoFixture } from '../../testing/src/video-fixtures.ts';
import { type RunningSandbox, type SandboxConfig, sandboxConfig, startSandbox } from '../src/index.ts';

/**
 * The sandbox in-process on port 0, a small "internet" beside it (image files and the test videos
 * at `/video/{fixture}` that the sandbox downloads, a webhook receiver that keeps the raw bytes)
 * and plain-HTTP helpers for Graph and control calls. These tests do not use @svc/graph-client: they check the wire itself (the
 * client's contract tests, in graph-client/, have a harness of their own).
 */
const APP_SECRET = 'sandbox-test-app-secret-0123456789';

/** A minimal JPEG whose start-of-frame says width × height, padded to `size` bytes if asked. */
function jpeg(width: number, height: number, size = 0): Buffer {
  const app0 = [
    0xff, 0xe0, 0x00, 0x10, 0x4a, 0x46, 0x49, 0x46, 0x00, 0x01, 0x01, 0x00, 0x00, 0x01, 0x00, 0x01,
  ];
  const sof = [0xff, 0xc0, 0x00, 0x11, 0x08, height >> 8, height & 0xff, width >> 8, width & 0xff, 0x03];
  const frame = [...sof, 0x01, 0x22, 0x00, 0x02, 0x11, 0x01, 0x03, 0x11, 0x01];
  const head = Buffer.from([0xff, 0xd8, ...app0, 0x00, 0x00, ...frame]);
  const padding = Buffer.alloc(Math.max(0, size - head.length - 2));
  return Buffer.concat([head, padding, Buffer.from([0xff, 0xd9])]);
}

/** A test video by its file name; a name that is not one → 404. */
async function serveVideo(res: ServerResponse, name: VideoFixture) {
  const type = name.endsWith('.mov') ? 'video/quicktime' : name.endsWith('.jpg') ? 'image/jpeg' : 'video/mp4';
  const bytes = await readFile(videoFixture(name)).catch(() => null);
  if (!bytes) return res.writeHead(404).end('not found');
  res.writeHead(200, { 'content-type': type }).end(bytes);
}

interface Received {
  url: string;
  headers: IncomingHttpHeaders;
  raw: Buffer;
}

interface Internet {
  url: string;
  /** Every POST to /webhook, in arrival order. */
  webhooks: Received[];
  /** The next n webhook POSTs are answered 500. */
  failNext: number;
}

async function startInternet() {
  const internet: Internet = { url: '', webhooks: [], failNext: 0 };
  const server = createServer((req, res) => {
    const chunks: Buffer[] = [];
    req.on('data', (c: Buffer) => chunks.push(c));
    req.on('end', () => {
      const path = new URL(req.url ?? '/', 'http://x').pathname;
      if (path === '/img/photo.jpg')
        return res.writeHead(200, { 'content-type': 'image/jpeg' }).end(jpeg(800, 600));
      if (path === '/img/tall.jpg')
        return res.writeHead(200, { 'content-type': 'image/jpeg' }).end(jpeg(540, 960));
      if (path === '/img/huge.jpg')
        return res.writeHead(200, { 'content-type': 'image/jpeg' }).end(jpeg(800, 600, 9 * 1024 * 1024));
      if (path === '/page.html') return res.writeHead(200, { 'content-type': 'text/html' }).end('<p>hi</p>');
      const video = /^\/video\/([\w.-]+)$/.exec(path)?.[1];
      if (video) return void serveVideo(res, video as VideoFixture);
      if (req.method === 'POST' && path === '/webhook') {
        internet.webhooks.push({ url: req.url ?? '', headers: req.headers, raw: Buffer.concat(chunks) });
        if (internet.failNext > 0) {
          internet.failNext--;
          return res.writeHead(500).end('down');
        }
        return res.writeHead(200).end('ok');
      }
      res.writeHead(404).end('not found');
    });
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  internet.url = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
  const close = () => new Promise<void>((resolve) => server.close(() => resolve()));
  return { internet, close };
}

type Json = Record<string, unknown>;
interface Answer<T = Json> {
  status: number;
  body: T;
}

export interface Connected {
  userId: string;
  pageId: string;
  pageToken: string;
  igId: string;
}

export interface Harness {
  sandbox: RunningSandbox;
  internet: Internet;
  control<T = Json>(method: string, path: string, body?: unknown): Promise<Answer<T>>;
  /** A Graph call with a token; `json` is sent as a JSON body. */
  graph<T = Json>(
    method: string,
    path: string,
    token: string,
    input?: { query?: Record<string, string | number>; json?: unknown },
  ): Promise<Answer<T>>;
  /** A user with one Page linked to Instagram, through consent, code and long-lived token exchange. */
  connect(name?: string): Promise<Connected>;
  /** The parsed body of the n-th last webhook received (default the last). */
  lastWebhook(fromEnd?: number): WebhookBody;
  close(): Promise<void>;
}

export type WebhookBody = {
  object: string;
  entry: {
    id: string;
    time: number;
    messaging?: { sender: { id: string }; recipient: { id: string }; timestamp: number; message: Json }[];
    changes?: { field: string; value: Json }[];
  }[];
};

const SCOPES = [
  'pages_show_list',
  'pages_read_engagement',
  'pages_manage_posts',
  'pages_manage_engagement',
  'pages_manage_metadata',
  'pages_messaging',
  'instagram_basic',
  'instagram_content_publish',
  'instagram_manage_comments',
  'instagram_manage_messages',
];

export async function startHarness(overrides: Partial<SandboxConfig> = {}): Promise<Harness> {
  const { internet, close: closeInternet } = await startInternet();
  const sandbox = await startSandbox(
    sandboxConfig({
      port: 0,
      logLevel: 'silent',
      appSecret: APP_SECRET,
      webhookUrl: `${internet.url}/webhook`,
      containerProcessingMs: 0,
      webhookRetries: 0,
      fetchTimeoutMs: 2000,
      ...overrides,
    }),
  );
  const request = async <T>(method: string, url: string, body?: string, type?: string) => {
    const res = await fetch(url, { method, headers: type ? { 'content-type': type } : {}, body });
    return { status: res.status, body: (await res.json()) as T };
  };
  const control = <T = Json>(method: string, path: string, body?: unknown) =>
    request<T>(
      method,
      `${sandbox.url}${path}`,
      body === undefined ? undefined : JSON.stringify(body),
      body === undefined ? undefined : 'application/json',
    );
  const graph = <T = Json>(
    method: string,
    path: string,
    token: string,
    input: { query?: Record<string, string | number>; json?: unknown } = {},
  ) => {
    const url = new URL(`/v25.0${path}`, sandbox.url);
    url.searchParams.set('access_token', token);
    for (const [k, v] of Object.entries(input.query ?? {})) url.searchParams.set(k, String(v));
    const json = input.json === undefined ? undefined : JSON.stringify(input.json);
    return request<T>(method, url.toString(), json, json === undefined ? undefined : 'application/json');
  };
  const connect = async (name = 'Jane'): Promise<Connected> => {
    const { appId } = sandbox.world.config;
    const created = await control<{ user: { id: string } }>('POST', '/__sandbox/users', {
      name,
      pages: [{ name: `${name}'s Bakery`, instagram: { username: `${name.toLowerCase()}bakery` } }],
    });
    const redirectUri = `${internet.url}/callback`;
    const consent = await fetch(`${sandbox.url}/__sandbox/consent`, {
      method: 'POST',
      body: new URLSearchParams({
        client_id: appId,
        redirect_uri: redirectUri,
        state: 's',
        scope: SCOPES.join(','),
        user_id: created.body.user.id,
        decision: 'approve',
      }),
      redirect: 'manual',
    });
    const code = new URL(consent.headers.get('location') ?? '').searchParams.get('code') ?? '';
    const app = { client_id: appId, client_secret: APP_SECRET };
    const short = await request<{ access_token: string }>(
      'GET',
      `${sandbox.url}/v25.0/oauth/access_token?${new URLSearchParams({ ...app, redirect_uri: redirectUri, code })}`,
    );
    const long = await request<{ access_token: string }>(
      'GET',
      `${sandbox.url}/v25.0/oauth/access_token?${new URLSearchParams({
        ...app,
        grant_type: 'fb_exchange_token',
        fb_exchange_token: short.body.access_token,
      })}`,
    );
    const pages = await graph<{
      data: { id: string; access_token: string; instagram_business_account: { id: string } }[];
    }>('GET', '/me/accounts', long.body.access_token, {
      query: { fields: 'id,access_token,instagram_business_account' },
    });
    const page = pages.body.data[0];
    if (!page) throw new Error('connect: no page');
    return {
      userId: created.body.user.id,
      pageId: page.id,
      pageToken: page.access_token,
      igId: page.instagram_business_account.id,
    };
  };
  const lastWebhook = (fromEnd = 1): WebhookBody => {
    const received = internet.webhooks.at(-fromEnd);
    if (!received) throw new Error('no webhook received');
    return JSON.parse(received.raw.toString()) as WebhookBody;
  };
  return {
    sandbox,
    internet,
    control,
    graph,
    connect,
    lastWebhook,
    close: async () => {
      await sandbox.close();
      await closeInternet();
    },
  };
}

/** Polls until `check` holds (background sends such as echoes), failing after ~2 s. */
export async function eventually(check: () => boolean): Promise<void> {
  for (let i = 0; i < 100; i++) {
    if (check()) return;
    await new Promise((resolve) => setTimeout(resolve, 20));
  }
  throw new Error('condition not met in time');
}

/** An Instagram post and a Page post to comment on, published through the Graph API. */
export async function publishBoth(h: Harness, c: Connected): Promise<{ mediaId: string; postId: string }> {
  const container = await h.graph<{ id: string }>('POST', `/${c.igId}/media`, c.pageToken, {
    json: { image_url: `${h.internet.url}/img/photo.jpg`, caption: 'New bread' },
  });
  const media = await h.graph<{ id: string }>('POST', `/${c.igId}/media_publish`, c.pageToken, {
    json: { creation_id: container.body.id },
  });
  const post = await h.graph<{ id: string }>('POST', `/${c.pageId}/feed`, c.pageToken, {
    json: { message: `Fresh today ${Math.random()}` },
  });
  if (!media.body.id || !post.body.id) throw new Error('publishBoth: publishing failed');
  return { mediaId: media.body.id, postId: post.body.id };
}
