import type { LookupAddress } from 'node:dns';
import { connect, createServer, type LookupFunction, type Server } from 'node:net';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import {
  assertLiteralHostAllowed,
  BlockedAddressError,
  guardedLookup,
  isLoopbackHost,
  type Resolver,
  systemResolver,
} from './lookup.ts';

/** A resolver that plays DNS from a table. */
function fakeDns(table: Record<string, string[]>): Resolver {
  return async (host) => {
    const addresses = table[host];
    if (!addresses) throw Object.assign(new Error(`not found: ${host}`), { code: 'ENOTFOUND' });
    return addresses.map((address) => ({ address, family: address.includes(':') ? 6 : 4 }));
  };
}

/** Calls a lookup function the way a socket does, as a promise. */
function callLookup(
  lookup: LookupFunction,
  host: string,
  options: { family?: number; all?: boolean } = {},
): Promise<string | LookupAddress[]> {
  return new Promise((resolve, reject) =>
    lookup(host, options, (error, address) => (error ? reject(error) : resolve(address))),
  );
}

const dns = fakeDns({
  'public.test': ['93.184.216.34', '2606:4700:4700::1111'],
  'inside.test': ['10.0.0.7'],
  'meta.test': ['169.254.169.254'],
  // One public and one private answer: refused, since the socket may pick either.
  'mixed.test': ['93.184.216.34', '127.0.0.1'],
});

describe('guardedLookup', () => {
  // Guarantee: a host name resolving to any private, loopback or metadata address is refused at connect time.
  it.each(['inside.test', 'meta.test', 'mixed.test'])('refuses %s', async (host) => {
    const error = await callLookup(guardedLookup(dns, false), host).catch((e: unknown) => e);
    expect(error).toBeInstanceOf(BlockedAddressError);
    expect((error as BlockedAddressError).code).toBe('EBLOCKEDADDRESS');
    expect((error as BlockedAddressError).host).toBe(host);
  });

  // Guarantee: public host names resolve normally, honouring the family and `all` options.
  it('passes public addresses through', async () => {
    const lookup = guardedLookup(dns, false);
    expect(await callLookup(lookup, 'public.test')).toBe('93.184.216.34');
    expect(await callLookup(lookup, 'public.test', { family: 6 })).toBe('2606:4700:4700::1111');
    expect(await callLookup(lookup, 'public.test', { all: true })).toHaveLength(2);
  });

  // Guarantee: with private networks allowed (development), private answers are used as they are.
  it('allows private addresses when told to', async () => {
    expect(await callLookup(guardedLookup(dns, true), 'inside.test')).toBe('10.0.0.7');
  });

  // Guarantee: an unknown name fails as a DNS error, not as a refusal.
  it('reports unknown names as not found', async () => {
    await expect(callLookup(guardedLookup(dns, false), 'nowhere.test')).rejects.toMatchObject({
      code: 'ENOTFOUND',
    });
  });
});

describe('what a refusal tells the caller', () => {
  // Guarantee: a refused name says only that its address is not allowed, never the internal
  // address it resolved to nor what kind of network that is (both stay on the error for our logs).
  it('names the host and nothing it resolved to', async () => {
    const error = await callLookup(guardedLookup(dns, false), 'inside.test').catch((e: unknown) => e);
    expect(error).toBeInstanceOf(BlockedAddressError);
    const { message, address } = error as BlockedAddressError;
    expect(address).toBe('10.0.0.7');
    expect(message).toBe(
      'the address of inside.test is not allowed: only public internet addresses can be reached',
    );
    expect(message).not.toMatch(/10\.0\.0\.7|private/);
  });
});

describe('literal addresses and loopback names', () => {
  // Guarantee: a URL with a literal private IP (which skips the lookup) is refused before connecting.
  it.each([
    'http://127.0.0.1:8080/x',
    'https://[::1]/x',
    'https://[::ffff:10.0.0.1]/x',
    'http://169.254.169.254/latest/meta-data',
    'http://0.0.0.0/',
    'https://[::ffff:0:a9fe:a9fe]/latest',
    'https://[64:ff9b:1::a00:1]/x',
  ])('refuses %s', (url) => {
    expect(() => assertLiteralHostAllowed(new URL(url), false)).toThrow(BlockedAddressError);
  });

  // Guarantee: public literals, host names (checked at lookup) and development pass.
  it('lets the rest through', () => {
    expect(() => assertLiteralHostAllowed(new URL('https://93.184.216.34/x'), false)).not.toThrow();
    expect(() => assertLiteralHostAllowed(new URL('https://example.com/x'), false)).not.toThrow();
    expect(() => assertLiteralHostAllowed(new URL('http://127.0.0.1/x'), true)).not.toThrow();
  });

  // Guarantee: every spelling of loopback is recognised as such.
  it('recognises loopback hosts', () => {
    for (const host of ['localhost', 'api.localhost', '127.0.0.2', '[::1]', '::ffff:127.0.0.1'])
      expect(isLoopbackHost(host), host).toBe(true);
    for (const host of ['example.com', '10.0.0.1', 'localhost.example.com'])
      expect(isLoopbackHost(host), host).toBe(false);
  });
});

describe('a real socket', () => {
  let server: Server;
  let port: number;
  beforeAll(async () => {
    server = createServer((socket) => socket.end('hello'));
    await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
    port = (server.address() as { port: number }).port;
  });
  afterAll(() => new Promise<void>((resolve) => server.close(() => resolve())));

  const dial = (allowPrivate: boolean) =>
    new Promise<string>((resolve, reject) => {
      const socket = connect({
        host: 'localhost',
        port,
        family: 4,
        lookup: guardedLookup(systemResolver, allowPrivate),
      });
      let data = '';
      socket.on('data', (chunk) => {
        data += chunk;
      });
      socket.on('end', () => resolve(data));
      socket.on('error', reject);
    });

  // Guarantee: a socket using the guarded lookup never reaches a loopback server outside development.
  it('refuses to connect to localhost', async () => {
    await expect(dial(false)).rejects.toMatchObject({ code: 'EBLOCKEDADDRESS' });
  });

  // Guarantee: the same socket connects when private networks are allowed.
  it('connects when private networks are allowed', async () => {
    expect(await dial(true)).toBe('hello');
  });
});
