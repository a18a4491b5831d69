import { isIP } from 'node:net';
import { z } from '@svc/config';

/**
 * Which proxies in front of the gateway may say who the client is (X-Forwarded-For), as Fastify's
 * `trustProxy` takes it: nobody (`false`), the nearest N hops (a number: the client is the address
 * the Nth proxy from us saw), or the proxies' own addresses (IPs or CIDRs). "Trust everyone" is not
 * offered: the left-most forwarded address is whatever the client wrote, so per-IP limits would be
 * the client's to choose.
 */
export type TrustProxy = false | number | string[];

const HINT =
  'set TRUST_PROXY to the number of proxies in front of the gateway (for example 1 behind one load balancer) or to their addresses/CIDRs, comma-separated';

/** TRUST_PROXY: `false` (default), a hop count, or a comma-separated list of proxy IPs/CIDRs. */
export function envTrustProxy() {
  return z
    .string()
    .default('false')
    .transform((text, context): TrustProxy => {
      const value = text.trim();
      if (value === '' || value === 'false' || value === '0') return false;
      if (value === 'true') {
        context.addIssue({
          code: 'custom',
          message: `"true" would trust any client's X-Forwarded-For: ${HINT}`,
        });
        return z.NEVER;
      }
      if (/^\d{1,2}$/.test(value)) return Number(value);
      const entries = value.split(',').map((entry) => entry.trim());
      const bad = entries.find((entry) => !isAddressOrCidr(entry));
      if (bad !== undefined) {
        context.addIssue({ code: 'custom', message: `"${bad}" is not an IP address or CIDR: ${HINT}` });
        return z.NEVER;
      }
      return entries;
    });
}

/** As Fastify's option takes it: a hop count is a function of the hop (its types have no number). */
export function trustProxyOption(
  trust: TrustProxy,
): false | string[] | ((address: string, hop: number) => boolean) {
  return typeof trust === 'number' ? (_address, hop) => hop < trust : trust;
}

function isAddressOrCidr(entry: string): boolean {
  const [address = '', bits, extra] = entry.split('/');
  if (extra !== undefined) return false;
  const family = isIP(address);
  if (family === 0) return false;
  if (bits === undefined) return true;
  const max = family === 4 ? 32 : 128;
  return /^\d{1,3}$/.test(bits) && Number(bits) <= max;
}

/**
 * The key a per-client limit counts under: the client's address as the trusted proxies report it
 * (the socket's peer when that is not a valid IP), an IPv6 client by its /64, since one host
 * usually holds a whole /64 and could otherwise take a fresh address for every request.
 */
export function clientKey(request: { ip: string; socket: { remoteAddress?: string } }): string {
  const address = isIP(request.ip) ? request.ip : (request.socket.remoteAddress ?? 'unknown');
  if (isIP(address) !== 6) return address;
  const mapped = address.toLowerCase().match(/^::ffff:(\d+\.\d+\.\d+\.\d+)$/);
  if (mapped?.[1]) return mapped[1];
  return `${ipv6Prefix64(address)}::/64`;
}

/** The first four groups of an IPv6 address, `::` expanded. */
function ipv6Prefix64(address: string): string {
  const [head = '', tail] = address.toLowerCase().replace(/%.*$/, '').split('::');
  const headGroups = head ? head.split(':') : [];
  const tailGroups = tail ? tail.split(':') : [];
  const zeros = Array<string>(Math.max(0, 8 - headGroups.length - tailGroups.length)).fill('0');
  const groups = tail === undefined ? headGroups : [...headGroups, ...zeros, ...tailGroups];
  return groups
    .slice(0, 4)
    .map((group) => group.replace(/^0+(?=.)/, ''))
    .join(':');
}

/** A comma-separated list of origins, each exactly as a browser serializes it (`new URL(o).origin`). */
export function envOrigins() {
  return z
    .string()
    .default('')
    .transform((text, context): string[] => {
      const origins = text
        .split(',')
        .map((entry) => entry.trim())
        .filter((entry) => entry !== '');
      const bad = origins.find((origin) => serializedOrigin(origin) !== origin);
      if (bad === undefined) return origins;
      context.addIssue({
        code: 'custom',
        message: `"${bad}" is not an origin as a browser sends it (scheme://host[:port], lower case, no path)`,
      });
      return z.NEVER;
    });
}

function serializedOrigin(text: string): string | null {
  try {
    return new URL(text).origin;
  } catch {
    return null;
  }
}
