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
