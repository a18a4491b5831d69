import { createServer, type IncomingMessage, type Server, type ServerResponse } from 'node:http';
import { ServiceError } from '@svc/errors';
import type { Resolver } from '@svc/net';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { fetchMediaUrl, parseMediaUrl } from './fetch-url.ts';

let server: Server;
let base: string;
const routes: Record<string, (req: IncomingMessage, res: ServerResponse) => void> = {
  '/ok': (_req, res) => res.end(Buffer.from('hello bytes')),
  '/hop1': (_req, res) => res.writeHead(302, { location: '/hop2' }).end(),
  '/hop2': (_req, res) => res.writeHead(301, { location: `${base}/hop3` }).end(),
  '/hop3': (_req, res) => res.writeHead(307, { location: '/ok' }).end(),
  '/loop': (_req, res) => res.writeHead(302, { location: '/loop' }).end(),
  '/nolocation': (_req, res) => res.writeHead(302).end(),
  '/to-ftp': (_req, res) => res.writeHead(302, { location: 'ftp://example.com/x' }).end(),
  '/missing': (_req, res) => res.writeHead(404).end('nope'),
  '/big-declared': (_req, res) => res.writeHead(200, { 'content-length': '5000' }).end(Buffer.alloc(5000)),
  '/big-streamed': (_req, res) => {
    res.writeHead(200);
    const chunk = Buffer.alloc(1000);
    let sent = 0;
    const timer = setInterval(() => {
      if (res.destroyed || sent > 50) return clearInterval(timer);
      res.write(chunk);
      sent++;
    }, 1);
  },
  '/slow': () => {
    // never answers
  },
  '/drip': (_req, res) => {
    res.writeHead(200);
    res.write('a');
  },
};

beforeAll(async () => {
  server = createServer((req, res) => (routes[req.url ?? ''] ?? routes['/missing'])?.(req, res));
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  base = `http://127.0.0.1:${(server.address() as { port: number }).port}`;
});
afterAll(() => {
  server.closeAllConnections();
  return new Promise<void>((resolve) => server.close(() => resolve()));
});

const dev = { allowPrivateNetworks: true, timeoutMs: 1500, maxBytes: 2000 };
const prod = { ...dev, allowPrivateNetworks: false };

async function refusal(promise: Promise<unknown>): Promise<ServiceError> {
  const error = await promise.then(
    () => undefined,
    (e: unknown) => e,
  );
  if (!(error instanceof ServiceError)) throw new Error(`expected a ServiceError, got ${String(error)}`);
  return error;
}

describe('fetchMediaUrl', () => {
  // Guarantee: a plain fetch returns the body's bytes.
  it('fetches the bytes', async () => {
    expect((await fetchMediaUrl(`${base}/ok`, dev)).toString()).toBe('hello bytes');
  });

  // Guarantee: up to three redirects (relative or absolute) are followed; a fourth is a network_error.
  it('follows a few redirects, not more', async () => {
    expect((await fetchMediaUrl(`${base}/hop1`, dev)).toString()).toBe('hello bytes');
    const error = await refusal(fetchMediaUrl(`${base}/loop`, dev));
    expect(error.code).toBe('network_error');
    expect(error.details).toMatchObject({
      host: new URL(base).host,
      reason: 'more than 3 redirects',
      status: 302,
    });
  });

  // Guarantee: remote failures are 502 network_error with the host and the reason or status in details.
  it.each([
    ['/missing', { reason: 'HTTP 404', status: 404 }],
    ['/nolocation', { reason: 'HTTP 302 redirect without a Location', status: 302 }],
    ['/to-ftp', { reason: 'redirect to a ftp: URL' }],
    ['/slow', { reason: 'timed out after 1500 ms' }],
    ['/drip', { reason: 'timed out after 1500 ms' }],
  ])('reports %s as a network error', async (path, details) => {
    const error = await refusal(fetchMediaUrl(`${base}${path}`, dev));
    expect(error.code).toBe('network_error');
    expect(error.httpStatus).toBe(502);
    expect(error.details).toMatchObject({ host: new URL(base).host, ...details });
  });

  // Guarantee: a closed port is a network error naming the refusal.
  it('reports a refused connection', async () => {
    const closed = createServer();
    await new Promise<void>((resolve) => closed.listen(0, '127.0.0.1', resolve));
    const port = (closed.address() as { port: number }).port;
    await new Promise((resolve) => closed.close(resolve));
    const error = await refusal(fetchMediaUrl(`http://127.0.0.1:${port}/x`, dev));
    expect(error).toMatchObject({ code: 'network_error', details: { reason: 'connection refused' } });
  });

  // Guarantee: reading stops past the size limit, whether the size is declared or streamed.
  it.each(['/big-declared', '/big-streamed'])('refuses %s past the limit', async (path) => {
    const error = await refusal(fetchMediaUrl(`${base}${path}`, dev));
    expect(error).toMatchObject({ code: 'validation_error', field: 'url' });
    expect(error.message).toContain('limit of 1.95 KiB (2000 bytes)');
  });

  // Guarantee: outside development loopback is refused, as a literal and as a name resolved at connect time.
  it.each([`http://127.0.0.1:1/ok`, 'http://[::1]:1/ok', 'http://localhost:1/ok'])(
    'refuses %s outside development',
    async (url) => {
      const error = await refusal(fetchMediaUrl(url, prod));
      expect(error).toMatchObject({ code: 'validation_error', field: 'url' });
      expect(error.message).toContain('an address that is not allowed');
    },
  );

  // Guarantee: a name whose DNS answer is the metadata or a private address is refused at connect
  // time, and the refusal does not tell the caller what the name resolved to nor what network it is.
  it('refuses names resolving to private addresses', async () => {
    const resolver: Resolver = async (host) => [
      { address: host === 'meta.test' ? '169.254.169.254' : '10.1.2.3', family: 4 },
    ];
    for (const host of ['meta.test', 'intranet.test']) {
      const error = await refusal(fetchMediaUrl(`https://${host}/image.png`, { ...prod, resolver }));
      expect(error).toMatchObject({ code: 'validation_error', field: 'url' });
      expect(error.message).toContain('url points to an address that is not allowed');
      expect(error.message).not.toMatch(/169\.254|10\.1\.2\.3|private|link-local/);
    }
  });

  // Guarantee: malformed URLs and other schemes are refused on the `url` field before any connection.
  it.each([
    ['not a url', 'absolute'],
    ['ftp://example.com/a.png', 'https or http'],
    ['file:///etc/passwd', 'https or http'],
    ['https://user:secret@example.com/a.png', 'credentials'],
  ])('refuses %s', (url, words) => {
    expect(() => parseMediaUrl(url)).toThrow(words);
  });
});
