import { createServer } from 'node:net';

// Plain HTTP helpers for tests and benches, free of vitest so scripts can import them too.

/** A small client for the gateway: JSON in, JSON out, status and headers kept. */
export function api(baseUrl: string, key?: string) {
  return async (method: string, path: string, body?: unknown, headers: Record<string, string> = {}) => {
    const response = await fetch(`${baseUrl}${path}`, {
      method,
      headers: {
        ...(key ? { authorization: `Bearer ${key}` } : {}),
        ...(body !== undefined ? { 'content-type': 'application/json' } : {}),
        ...headers,
      },
      body: body === undefined ? undefined : JSON.stringify(body),
    });
    const text = await response.text();
    return { status: response.status, headers: response.headers, body: text ? JSON.parse(text) : undefined };
  };
}

/**
 * Uploads a file as a multipart form (`POST /v1/media`; what it is comes from its bytes) and
 * answers the media's id. A 429 (the partner's uploads at their bound) is waited out as told and
 * sent again, as a well-behaved client does; any other refusal throws with the answer.
 */
export async function uploadFile(
  gatewayUrl: string,
  key: string,
  workspace: string,
  bytes: Uint8Array,
  filename: string,
): Promise<string> {
  for (;;) {
    const form = new FormData();
    form.append('workspace', workspace);
    form.append('file', new Blob([new Uint8Array(bytes)]), filename);
    const uploaded = await fetch(`${gatewayUrl}/v1/media`, {
      method: 'POST',
      headers: { authorization: `Bearer ${key}` },
      body: form,
    });
    const media = (await uploaded.json()) as { id: string };
    if (uploaded.status === 429) {
      const seconds = Number(uploaded.headers.get('retry-after') ?? '1');
      await new Promise((resolve) => setTimeout(resolve, seconds * 1000));
      continue;
    }
    if (uploaded.status !== 201) throw new Error(`upload: ${uploaded.status} ${JSON.stringify(media)}`);
    return media.id;
  }
}

/**
 * Where this process hands out ports: a block of its own below the OS's ephemeral range (32768 and
 * up on Linux), one block per test worker (VITEST_POOL_ID) or process. A port the OS picked for
 * `listen(0)` could be picked again for another worker's server before ours listens on it; ports
 * from disjoint blocks that the OS never hands out cannot collide that way.
 */
const FIRST_PORT = 10_000;
const BLOCK = 1_000;
const BLOCKS = 22;
const block = Number(process.env.VITEST_POOL_ID ?? process.pid) % BLOCKS;
let offset = Math.floor(Math.random() * BLOCK);

/** A port nobody listens on right now, for a service whose URL must be known first. */
export async function freePort(): Promise<number> {
  for (let tries = 0; tries < BLOCK; tries++) {
    offset = (offset + 1) % BLOCK;
    const port = FIRST_PORT + block * BLOCK + offset;
    if (await canListen(port)) return port;
  }
  throw new Error(`no free port in ${FIRST_PORT + block * BLOCK}-${FIRST_PORT + (block + 1) * BLOCK - 1}`);
}

function canListen(port: number): Promise<boolean> {
  const server = createServer();
  return new Promise((resolve) => {
    server.once('error', () => resolve(false));
    server.listen(port, '127.0.0.1', () => server.close(() => resolve(true)));
  });
}

/**
 * The sum of a Prometheus counter's series whose label text holds every one of `labels`
 * (`'code="OK"'`), read off a `/metrics` URL: what a test or bench reads of a service's counters.
 */
export async function counterSum(metricsUrl: string, metric: string, labels: string[]): Promise<number> {
  const text = await (await fetch(metricsUrl)).text();
  let total = 0;
  for (const line of text.split('\n'))
    if (line.startsWith(`${metric}{`) && labels.every((label) => line.includes(label)))
      total += Number(line.slice(line.lastIndexOf(' ') + 1));
  return total;
}
