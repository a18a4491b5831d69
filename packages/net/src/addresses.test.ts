import { describe, expect, it } from 'vitest';
import { blockedReason } from './addresses.ts';

describe('address classification', () => {
  // Guarantee: every loopback, private, link-local and metadata address is refused, in every spelling.
  it.each([
    ['127.0.0.1', 'loopback'],
    ['127.255.0.9', 'loopback'],
    ['::1', 'loopback'],
    ['[::1]', 'loopback'],
    ['::ffff:127.0.0.1', 'loopback'],
    ['::ffff:7f00:1', 'loopback'],
    ['0:0:0:0:0:ffff:7f00:0001', 'loopback'],
    ['10.0.0.1', 'private'],
    ['172.16.5.4', 'private'],
    ['172.31.255.255', 'private'],
    ['192.168.1.1', 'private'],
    ['::ffff:10.0.0.1', 'private'],
    ['100.64.0.1', 'private (carrier-grade NAT)'],
    ['169.254.169.254', 'link-local (cloud metadata)'],
    ['64:ff9b::a9fe:a9fe', 'link-local (cloud metadata)'],
    ['fd00:ec2::254', 'private (unique local, cloud metadata)'],
    ['fe80::1', 'link-local'],
    ['fe80::1%eth0', 'link-local'],
    ['0.0.0.0', 'unspecified'],
    ['::', 'unspecified'],
    ['224.0.0.1', 'multicast'],
    ['255.255.255.255', 'reserved'],
    ['2002:7f00:1::', 'special-purpose (6to4)'],
    ['::ffff:0:7f00:1', 'special-purpose (IPv4-translated)'],
    ['::ffff:0:8.8.8.8', 'special-purpose (IPv4-translated)'],
    ['64:ff9b:1::a9fe:a9fe', 'special-purpose (local-use NAT64)'],
    ['64:ff9b:1:ffff::1', 'special-purpose (local-use NAT64)'],
    ['not-an-ip', 'not an IP address'],
  ])('refuses %s (%s)', (address, reason) => {
    expect(blockedReason(address)).toBe(reason);
  });

  // Guarantee: public addresses, including ones next to the blocked ranges, are allowed.
  it.each([
    '93.184.216.34',
    '8.8.8.8',
    '172.15.255.255',
    '172.32.0.0',
    '100.63.255.255',
    '169.253.1.1',
    '11.0.0.1',
    '2606:4700:4700::1111',
    '::ffff:8.8.8.8',
    '64:ff9b::808:808',
  ])('allows %s', (address) => {
    expect(blockedReason(address)).toBeNull();
  });
});
