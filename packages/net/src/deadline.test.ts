import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { request } from 'undici';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { Deadline } from './deadline.ts';

// A local server that answers /quick at once and never answers /stuck: the deadline must cut an
// undici request off, say so, and never fire once cleared.
let server: Server;
let base: string;
beforeAll(async () => {
  server = createServer((req, res) => {
    if (req.url === '/quick') res.end('ok');
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  base = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
});
afterAll(() => {
  server.closeAllConnections();
  server.close();
});

describe('Deadline', () => {
  // Guarantee: a request that gets no answer is aborted once the deadline passes, and the caller
  // can tell a deadline from any other failure.
  it('aborts an undici request that outlives it', async () => {
    const deadline = new Deadline(100);
    const started = Date.now();
    await expect(request(`${base}/stuck`, { signal: deadline.signal })).rejects.toThrow();
    expect(deadline.expired).toBe(true);
    expect(Date.now() - started).toBeGreaterThanOrEqual(90);
    deadline.clear();
  });

  // Guarantee: a cleared deadline never fires (no timer outlives its request). Its length leaves the
  // quick answer time to come on a loaded machine (50 ms did not, once, in CI).
  it('stays quiet once cleared', async () => {
    const deadline = new Deadline(1_000);
    let aborted = false;
    deadline.signal.on('abort', () => {
      aborted = true;
    });
    const response = await request(`${base}/quick`, { signal: deadline.signal });
    expect(await response.body.text()).toBe('ok');
    deadline.clear();
    await new Promise((resolve) => setTimeout(resolve, 1_100));
    expect(aborted).toBe(false);
    expect(deadline.expired).toBe(false);
  });
});
