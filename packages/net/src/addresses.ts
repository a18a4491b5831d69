import { isIP } from 'node:net';

/**
 * Which IP addresses an outbound request to a URL someone else chose (a webhook delivery, a media
 * fetch by URL) may never reach outside development: loopback, private,
 * link-local (cloud metadata at 169.254.169.254 and fd00:ec2::254 included), and the other
 * special-purpose ranges of RFC 6890 that are not the public internet. IPv6 forms that embed an
 * IPv4 address (mapped ::ffff:a.b.c.d, NAT64 64:ff9b::/96, the old compatible ::a.b.c.d) are judged
 * by the IPv4 address inside, so `[::ffff:127.0.0.1]` is loopback too. The translation ranges whose
 * IPv4 side is the operator's choice (IPv4-translated ::ffff:0:0:0/96, local-use NAT64
 * 64:ff9b:1::/48) are refused whole.
 */
interface Range {
  base: bigint;
  bits: number;
  reason: string;
}

const IPV4_RANGES: [string, number, string][] = [
  ['0.0.0.0', 8, 'unspecified'],
  ['10.0.0.0', 8, 'private'],
  ['100.64.0.0', 10, 'private (carrier-grade NAT)'],
  ['127.0.0.0', 8, 'loopback'],
  ['169.254.0.0', 16, 'link-local (cloud metadata)'],
  ['172.16.0.0', 12, 'private'],
  ['192.0.0.0', 24, 'special-purpose'],
  ['192.0.2.0', 24, 'documentation'],
  ['192.168.0.0', 16, 'private'],
  ['198.18.0.0', 15, 'special-purpose (benchmarking)'],
  ['198.51.100.0', 24, 'documentation'],
  ['203.0.113.0', 24, 'documentation'],
  ['224.0.0.0', 4, 'multicast'],
  ['240.0.0.0', 4, 'reserved'],
];

const IPV6_RANGES: [string, number, string][] = [
  ['::', 128, 'unspecified'],
  ['::1', 128, 'loopback'],
  ['100::', 64, 'special-purpose (discard)'],
  ['64:ff9b:1::', 48, 'special-purpose (local-use NAT64)'],
  ['::ffff:0:0:0', 96, 'special-purpose (IPv4-translated)'],
  ['2001:db8::', 32, 'documentation'],
  // 6to4 and Teredo tunnel to IPv4 addresses we cannot judge from here.
  ['2002::', 16, 'special-purpose (6to4)'],
  ['2001::', 32, 'special-purpose (Teredo)'],
  ['fc00::', 7, 'private (unique local, cloud metadata)'],
  ['fe80::', 10, 'link-local'],
  ['fec0::', 10, 'site-local'],
  ['ff00::', 8, 'multicast'],
];

const v4 = IPV4_RANGES.map(([base, bits, reason]) => range(ipv4ToBigInt(base), bits, 32, reason));
const v6 = IPV6_RANGES.map(([base, bits, reason]) => range(ipv6ToBigInt(base), bits, 128, reason));

/** Why `address` is refused as a target, or null when it is a public address. */
export function blockedReason(address: string): string | null {
  const plain = address.replace(/^\[|\]$/g, '').replace(/%.*$/, '');
  const family = isIP(plain);
  if (family === 4) return match(v4, ipv4ToBigInt(plain), 32);
  if (family !== 6) return 'not an IP address';
  const value = ipv6ToBigInt(plain);
  const embedded = embeddedIpv4(value);
  if (embedded !== null) return match(v4, embedded, 32);
  return match(v6, value, 128);
}

function embeddedIpv4(value: bigint): bigint | null {
  const high96 = value >> 32n;
  const low32 = value & 0xffffffffn;
  if (high96 === 0xffffn) return low32; // ::ffff:a.b.c.d (IPv4-mapped)
  if (high96 === 0x64ff9b0000000000000000n) return low32; // 64:ff9b::a.b.c.d (NAT64)
  if (high96 === 0n && low32 > 1n) return low32; // ::a.b.c.d (deprecated IPv4-compatible)
  return null;
}

function range(base: bigint, bits: number, width: number, reason: string): Range {
  return { base: base >> BigInt(width - bits), bits, reason };
}

function match(ranges: Range[], value: bigint, width: number): string | null {
  for (const r of ranges) if (value >> BigInt(width - r.bits) === r.base) return r.reason;
  return null;
}

function ipv4ToBigInt(address: string): bigint {
  return address.split('.').reduce((acc, part) => (acc << 8n) | BigInt(Number(part)), 0n);
}

/** Expands any valid IPv6 text (`::`, embedded dotted IPv4) into its 128-bit value. */
function ipv6ToBigInt(address: string): bigint {
  let text = address.toLowerCase();
  const dotted = /(\d+\.\d+\.\d+\.\d+)$/.exec(text);
  if (dotted?.[1]) {
    const n = ipv4ToBigInt(dotted[1]);
    text = `${text.slice(0, -dotted[1].length)}${(n >> 16n).toString(16)}:${(n & 0xffffn).toString(16)}`;
  }
  const [head = '', tail] = text.split('::');
  const headParts = head ? head.split(':') : [];
  const tailParts = tail ? tail.split(':') : [];
  const missing = 8 - headParts.length - tailParts.length;
  const parts = [...headParts, ...Array<string>(tail === undefined ? 0 : missing).fill('0'), ...tailParts];
  return parts.reduce((acc, part) => (acc << 16n) | BigInt(Number.parseInt(part || '0', 16)), 0n);
}
