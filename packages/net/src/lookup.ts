import { lookup as dnsLookup, type LookupAddress } from 'node:dns';
import { isIP, type LookupFunction } from 'node:net';
import { blockedReason } from './addresses.ts';

/** Resolves a host name to every address it has (injectable so tests can play DNS). */
export type Resolver = (hostname: string) => Promise<LookupAddress[]>;

export const systemResolver: Resolver = (hostname) =>
  new Promise((resolve, reject) =>
    dnsLookup(hostname, { all: true, verbatim: true }, (error, addresses) =>
      error ? reject(error) : resolve(addresses),
    ),
  );

/**
 * A connection refused because its target is not on the public internet. Its message names the
 * host the caller gave and nothing else: the resolved address and its kind are for our logs only
 * (`address`, `reason`), since telling a tenant what an internal name resolves to maps our network.
 */
export class BlockedAddressError extends Error {
  override name = 'BlockedAddressError';
  readonly code = 'EBLOCKEDADDRESS';

  constructor(
    readonly host: string,
    readonly address: string,
    readonly reason: string,
  ) {
    super(`the address of ${host} is not allowed: only public internet addresses can be reached`);
  }
}

/** The URL's host without IPv6 brackets. */
export function hostOf(url: URL): string {
  return url.hostname.replace(/^\[|\]$/g, '');
}

/** `localhost`, `*.localhost` or a literal loopback address. */
export function isLoopbackHost(host: string): boolean {
  const plain = host.replace(/^\[|\]$/g, '').toLowerCase();
  if (plain === 'localhost' || plain.endsWith('.localhost')) return true;
  return isIP(plain) !== 0 && blockedReason(plain) === 'loopback';
}

/** Throws when any address is blocked: one private answer is enough to refuse the host. */
export function assertPublic(host: string, addresses: string[]): void {
  for (const address of addresses) {
    const reason = blockedReason(address);
    if (reason) throw new BlockedAddressError(host, address, reason);
  }
}

/**
 * A URL whose host is a literal IP connects without any lookup, so `guardedLookup` never sees it:
 * call this before connecting to such a URL. Host names are left to the connect-time lookup.
 */
export function assertLiteralHostAllowed(url: URL, allowPrivateNetworks: boolean): void {
  if (allowPrivateNetworks) return;
  const host = hostOf(url);
  if (!isIP(host)) return;
  const reason = blockedReason(host);
  if (reason) throw new BlockedAddressError(host, host, reason);
}

/**
 * The `lookup` a socket connects with. The address is checked here, at connect time, and the
 * socket connects to exactly the address checked: a host name that resolved to a public address
 * when the URL was accepted and to 10.0.0.1 now (DNS rebinding) is refused.
 * Node calls it with `all: true` when it races IPv4 and IPv6 (autoSelectFamily).
 */
export function guardedLookup(resolve: Resolver, allowPrivateNetworks: boolean): LookupFunction {
  return (hostname, options, callback) => {
    resolve(hostname)
      .then((found) => {
        if (!allowPrivateNetworks)
          assertPublic(
            hostname,
            found.map((a) => a.address),
          );
        const family = options.family === 4 || options.family === 6 ? options.family : 0;
        const usable = family ? found.filter((a) => a.family === family) : found;
        const first = usable[0];
        if (!first) throw Object.assign(new Error(`no address for ${hostname}`), { code: 'ENOTFOUND' });
        if (options.all) callback(null, usable);
        else callback(null, first.address, first.family);
      })
      .catch((error: NodeJS.ErrnoException) => callback(error, '', 0));
  };
}
