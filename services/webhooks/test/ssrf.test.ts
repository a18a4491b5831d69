import type { LookupAddress } from 'node:dns';
import type { AddressInfo } from 'node:net';
import { createServer, type Server } from 'node:net';
import { DEVELOPMENT_KEYRING } from '@svc/crypto';
import { newId } from '@svc/ids';
import { BlockedAddressError, guardedLookup, type Resolver } from '@svc/net';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startWebhooksStack, type WebhooksStack } from './harness.ts';

// Production mode: private networks are off (the default outside development). DNS is played by
// this table, so no test here sends a packet anywhere but to loopback.
const dns = new Map<string, LookupAddress[]>();
const resolver: Resolver = async (host) => {
  const found = dns.get(host);
  if (!found) throw Object.assign(new Error(`getaddrinfo ENOTFOUND ${host}`), { code: 'ENOTFOUND' });
  return found;
};
const PRIVATE_TARGETS: LookupAddress[] = [
  { address: '127.0.0.1', family: 4 },
  { address: '10.0.0.1', family: 4 },
  { address: '169.254.169.254', family: 4 },
  { address: '::1', family: 6 },
];
const PUBLIC: LookupAddress = { address: '93.184.216.34', family: 4 };

let stack: WebhooksStack;
let loopbackServer: Server;
let connections = 0;
let port = 0;

beforeAll(async () => {
  stack = await startWebhooksStack(
    { APP_ENV: 'production', ENCRYPTION_KEYS: DEVELOPMENT_KEYRING, WEBHOOK_TIMEOUT_MS: '1000' },
    { resolver },
  );
  // Listens on every loopback address (IPv4 and IPv6): any connection that got through would show here.
  loopbackServer = createServer((socket) => {
    connections++;
    socket.destroy();
  });
  await new Promise<void>((resolve) =>
    loopbackServer.listen({ port: 0, host: '::', ipv6Only: false }, resolve),
  );
  port = (loopbackServer.address() as AddressInfo).port;
});
afterAll(async () => {
  await stack.stop();
  loopbackServer.close();
});

const put = (url: string, partnerId = newId('partner')) =>
  stack.client.putWebhook({ partnerId, partnerSlug: `slug-${partnerId}`, url, rotateSecret: false });

describe('SSRF protection outside development', () => {
  // Guarantee: the service says nothing about development mode when it is off.
  it('runs without the development-mode allowance', () => {
    expect(stack.logs.some((l) => String(l.msg).includes('DEVELOPMENT MODE'))).toBe(false);
  });

  // Guarantee: literal loopback, private, link-local/metadata and IPv6 loopback URLs are refused when saved.
  it.each([
    'https://127.0.0.1/hook',
    'https://10.0.0.1/hook',
    'https://169.254.169.254/latest/meta-data/',
    'https://[::1]/hook',
    'http://hooks.example.com/hook',
    'http://127.0.0.1:8080/hook',
  ])('refuses to save %s', async (url) => {
    await expect(put(url)).rejects.toMatchObject({ code: 'validation_error', field: 'url' });
  });

  // Guarantee: a host name that resolves to one of those addresses is refused when saved (by resolution).
  it.each(PRIVATE_TARGETS)('refuses to save a name resolving to $address', async (target) => {
    const host = `to-${target.address.replaceAll(/[.:]/g, '-')}.test`;
    dns.set(host, [target]);
    await expect(put(`https://${host}/hook`)).rejects.toMatchObject({
      code: 'validation_error',
      field: 'url',
      message: expect.stringContaining(target.address),
    });
    // One private answer among public ones is enough to refuse.
    dns.set(host, [PUBLIC, target]);
    await expect(put(`https://${host}/hook`)).rejects.toMatchObject({ code: 'validation_error' });
  });

  // Guarantee: the check is repeated on the resolved address at connect time: a name that was public
  // when saved and now resolves to loopback (DNS rebinding) is refused, and no connection is made;
  // the attempt the partner reads says the address is not allowed, never what it resolved to.
  it.each(PRIVATE_TARGETS.filter((t) => t.address === '127.0.0.1' || t.address === '::1'))(
    'refuses at connect time when the name rebinds to $address',
    async (target) => {
      const host = `rebind-${target.family}.test`;
      dns.set(host, [PUBLIC]);
      const partnerId = newId('partner');
      await put(`https://${host}:${port}/hook`, partnerId);
      dns.set(host, [target]);
      const { attempt } = await stack.client.testWebhook({ partnerId, partnerSlug: `slug-${partnerId}` });
      expect(attempt?.succeeded).toBe(false);
      expect(attempt?.error).toContain(`the address of ${host} is not allowed`);
      expect(attempt?.error).not.toContain(target.address);
      expect(attempt?.error).not.toContain('loopback');
      expect(connections).toBe(0);
    },
  );

  // Guarantee: the connect-time lookup refuses every private target, without any traffic (the
  // lookup answers before a socket would connect).
  it.each(PRIVATE_TARGETS)('the connect-time lookup refuses $address', async (target) => {
    dns.set('rebound.test', [target]);
    const lookup = guardedLookup(resolver, false);
    for (const all of [false, true]) {
      const error = await new Promise((resolve) =>
        lookup('rebound.test', { all, family: 0 }, (err) => resolve(err)),
      );
      expect(error).toBeInstanceOf(BlockedAddressError);
      expect((error as BlockedAddressError).address).toBe(target.address);
    }
  });

  // Guarantee: a URL with a literal private address already stored (saved under development mode, say)
  // is refused at delivery: literal addresses connect without a lookup, so they are checked apart.
  it('refuses a stored literal loopback URL at delivery', async () => {
    const partnerId = newId('partner');
    dns.set('fine.test', [PUBLIC]);
    await put(`https://fine.test:${port}/hook`, partnerId);
    await stack.db.query('UPDATE webhooks SET url = $1 WHERE partner_id = $2', [
      `https://127.0.0.1:${port}/hook`,
      partnerId,
    ]);
    const { attempt } = await stack.client.testWebhook({ partnerId, partnerSlug: `slug-${partnerId}` });
    expect(attempt?.error).toContain('the address of 127.0.0.1 is not allowed');
    expect(connections).toBe(0);
  });
});

describe('development mode', () => {
  // Guarantee: development mode is explicit and announced at start-up.
  it('announces that loopback and private targets are allowed', async () => {
    const dev = await startWebhooksStack({ APP_ENV: 'development' });
    try {
      expect(dev.logs.some((l) => l.level === 40 && String(l.msg).includes('DEVELOPMENT MODE'))).toBe(true);
    } finally {
      await dev.stop();
    }
  });
});
