import { BlockList, isIP } from 'node:net';

/** Why an address is refused (RULINGS.md "Egress"). */
export type RefusedAddressClass = 'loopback' | 'private' | 'link_local' | 'metadata' | 'unspecified' | 'multicast' | 'reserved';

function list(entries: readonly [string, number, 'ipv4' | 'ipv6'][]): BlockList {
  const blocks = new BlockList();
  for (const [network, prefix, type] of entries) blocks.addSubnet(network, prefix, type);
  return blocks;
}

// Cloud metadata endpoints: refused even when private addresses are allowed.
const METADATA = new BlockList();
for (const address of ['169.254.169.254', '169.254.170.2', '100.100.100.200']) METADATA.addAddress(address, 'ipv4');
METADATA.addAddress('fd00:ec2::254', 'ipv6');

const CLASSES: readonly [RefusedAddressClass, BlockList][] = [
  ['unspecified', list([['0.0.0.0', 8, 'ipv4'], ['::', 128, 'ipv6']])],
  ['loopback', list([['127.0.0.0', 8, 'ipv4'], ['::1', 128, 'ipv6']])],
  ['link_local', list([['169.254.0.0', 16, 'ipv4'], ['fe80::', 10, 'ipv6']])],
  [
    'private',
    list([
      ['10.0.0.0', 8, 'ipv4'],
      ['172.16.0.0', 12, 'ipv4'],
      ['192.168.0.0', 16, 'ipv4'],
      ['100.64.0.0', 10, 'ipv4'], // shared address space (carrier-grade NAT)
      ['fc00::', 7, 'ipv6'],
    ]),
  ],
  ['multicast', list([['224.0.0.0', 4, 'ipv4'], ['ff00::', 8, 'ipv6']])],
  [
    'reserved',
    list([
      ['192.0.0.0', 24, 'ipv4'],
      ['192.0.2.0', 24, 'ipv4'],
      ['198.18.0.0', 15, 'ipv4'],
      ['198.51.100.0', 24, 'ipv4'],
      ['203.0.113.0', 24, 'ipv4'],
      ['240.0.0.0', 4, 'ipv4'], // includes 255.255.255.255
      ['100::', 64, 'ipv6'],
      ['2001:db8::', 32, 'ipv6'],
    ]),
  ],
];

/** The IPv4 address an IPv6 address carries (IPv4-mapped ::ffff:a.b.c.d, NAT64 64:ff9b::/96), if any. */
function embeddedIpv4(address: string): string | null {
  const lower = address.toLowerCase();
  const dotted = /^(?:::ffff:|64:ff9b::)(\d+\.\d+\.\d+\.\d+)$/.exec(lower);
  if (dotted) return dotted[1]!;
  const hex = /^(?:::ffff:|64:ff9b::)([0-9a-f]{1,4}):([0-9a-f]{1,4})$/.exec(lower);
  if (hex) {
    const hi = parseInt(hex[1]!, 16);
    const lo = parseInt(hex[2]!, 16);
    return `${hi >> 8}.${hi & 255}.${lo >> 8}.${lo & 255}`;
  }
  return null;
}

/**
 * The class that refuses `address`, or null for an ordinary public address. Not an IP address
 * at all is 'reserved' (nothing to connect to).
 */
export function classifyAddress(address: string): RefusedAddressClass | null {
  const bare = address.startsWith('[') && address.endsWith(']') ? address.slice(1, -1) : address;
  const family = isIP(bare);
  if (family === 0) return 'reserved';
  if (family === 6) {
    const v4 = embeddedIpv4(bare);
    if (v4 !== null) return classifyAddress(v4);
  }
  const type = family === 4 ? 'ipv4' : 'ipv6';
  if (METADATA.check(bare, type)) return 'metadata';
  for (const [name, blocks] of CLASSES) if (blocks.check(bare, type)) return name;
  return null;
}
