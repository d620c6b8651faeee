import { BlockList, isIP } from 'node:net';

/**
 * Why an address is refused (RULINGS.md "Egress"). `deprecated` is an IPv6 range the IETF
 * withdrew (site-local fec0::/10, IPv4-compatible ::/96, ORCHID): nothing legitimate lives there,
 * and a stack may still route it somewhere local (docs/adr/0018).
 */
export type RefusedAddressClass =
  | 'loopback'
  | 'private'
  | 'link_local'
  | 'metadata'
  | 'unspecified'
  | 'multicast'
  | 'reserved'
  | 'deprecated';

function list(entries: readonly [string, number, 'ipv4' | 'ipv6'][]): BlockList {
  const blocks = new BlockList();
  for (const [network, prefix, type] of entries) blocks.addSubnet(network, prefix, type);
  return blocks;
}

/** One cloud instance-metadata endpoint: an address or a host name, and whose it is. */
export interface MetadataEndpoint {
  readonly host: string;
  readonly kind: 'ipv4' | 'ipv6' | 'name';
  readonly clouds: string;
}

/**
 * Every major cloud's instance-metadata endpoint, IPv4, IPv6 and host name: THE one list
 * (docs/adr/0053). Each is refused whatever the egress switches say — allow_private_addresses,
 * allow_http and allow_hosts included — at write time and at dial time, literal or resolved,
 * and inside every IPv6 form that carries an IPv4 address (ADR 0018). A metadata service hands
 * out the host's cloud credentials: no MCP server, token endpoint or fetch has a reason to
 * reach one. Tested row by row in packages/mcp-adapter/test/egress-metadata.test.ts.
 */
export const METADATA_ENDPOINTS: readonly MetadataEndpoint[] = [
  { host: '169.254.169.254', kind: 'ipv4', clouds: 'AWS, GCP, Azure, Oracle, DigitalOcean, Hetzner, OpenStack, IBM, Linode, Vultr' },
  { host: '169.254.170.2', kind: 'ipv4', clouds: 'AWS ECS task metadata and credentials' },
  { host: '169.254.170.23', kind: 'ipv4', clouds: 'AWS EKS Pod Identity agent' },
  { host: '168.63.129.16', kind: 'ipv4', clouds: 'Azure WireServer (a public-range address)' },
  { host: '100.100.100.200', kind: 'ipv4', clouds: 'Alibaba Cloud' },
  { host: '192.0.0.192', kind: 'ipv4', clouds: 'Oracle Cloud (OCI)' },
  { host: '169.254.0.23', kind: 'ipv4', clouds: 'Tencent Cloud' },
  { host: '169.254.42.42', kind: 'ipv4', clouds: 'Scaleway' },
  { host: 'fd00:ec2::254', kind: 'ipv6', clouds: 'AWS (Nitro IPv6 IMDS)' },
  { host: 'fd00:ec2::23', kind: 'ipv6', clouds: 'AWS EKS Pod Identity agent' },
  { host: 'fd20:ce::254', kind: 'ipv6', clouds: 'GCP' },
  { host: 'fd00:42::42', kind: 'ipv6', clouds: 'Scaleway' },
  { host: 'fd00:a9fe:a9fe::1', kind: 'ipv6', clouds: 'Linode (Akamai)' },
  { host: 'fe80::a9fe:a9fe', kind: 'ipv6', clouds: 'OpenStack (IPv6 metadata)' },
  { host: 'metadata.google.internal', kind: 'name', clouds: 'GCP' },
  { host: 'metadata.goog', kind: 'name', clouds: 'GCP' },
  { host: 'metadata', kind: 'name', clouds: 'GCP (the search-domain short name)' },
  { host: 'instance-data', kind: 'name', clouds: 'AWS' },
  { host: 'instance-data.ec2.internal', kind: 'name', clouds: 'AWS' },
  { host: 'metadata.tencentyun.com', kind: 'name', clouds: 'Tencent Cloud' },
];

// Refused even when private addresses are allowed.
const METADATA = new BlockList();
for (const endpoint of METADATA_ENDPOINTS) if (endpoint.kind !== 'name') METADATA.addAddress(endpoint.host, endpoint.kind);
const METADATA_NAMES: ReadonlySet<string> = new Set(METADATA_ENDPOINTS.filter((e) => e.kind === 'name').map((e) => e.host));

/** A host name (lowercase, no trailing dot) that names a metadata service. */
export function isMetadataHostName(host: string): boolean {
  return METADATA_NAMES.has(host);
}

const CLASSES: readonly [RefusedAddressClass, BlockList][] = [
  [
    'unspecified',
    list([
      ['0.0.0.0', 8, 'ipv4'],
      ['::', 128, 'ipv6'],
    ]),
  ],
  [
    'loopback',
    list([
      ['127.0.0.0', 8, 'ipv4'],
      ['::1', 128, 'ipv6'],
    ]),
  ],
  [
    'link_local',
    list([
      ['169.254.0.0', 16, 'ipv4'],
      ['fe80::', 10, 'ipv6'],
    ]),
  ],
  [
    'private',
    list([
      ['10.0.0.0', 8, 'ipv4'],
      ['172.16.0.0', 12, 'ipv4'],
      ['192.168.0.0', 16, 'ipv4'],
      ['100.64.0.0', 10, 'ipv4'], // shared address space (carrier-grade NAT)
      ['fc00::', 7, 'ipv6'],
      ['64:ff9b:1::', 48, 'ipv6'], // RFC 8215 local-use IPv4/IPv6 translation: a local network's own
    ]),
  ],
  [
    'deprecated',
    list([
      ['192.88.99.0', 24, 'ipv4'], // RFC 7526: the 6to4 relay anycast prefix
      ['fec0::', 10, 'ipv6'], // RFC 3879: site-local
      ['2001:10::', 28, 'ipv6'], // RFC 4843: ORCHID
    ]),
  ],
  [
    'multicast',
    list([
      ['224.0.0.0', 4, 'ipv4'],
      ['ff00::', 8, 'ipv6'],
    ]),
  ],
  [
    'reserved',
    list([
      ['192.0.0.0', 24, 'ipv4'],
      ['192.0.2.0', 24, 'ipv4'],
      ['198.18.0.0', 15, 'ipv4'],
      ['198.51.100.0', 24, 'ipv4'],
      ['203.0.113.0', 24, 'ipv4'],
      ['240.0.0.0', 4, 'ipv4'], // includes 255.255.255.255
      ['100::', 64, 'ipv6'], // discard-only
      ['2001:2::', 48, 'ipv6'], // benchmarking
      ['2001:db8::', 32, 'ipv6'], // documentation
      ['3fff::', 20, 'ipv6'], // documentation (RFC 9637)
      ['5f00::', 16, 'ipv6'], // SRv6 SIDs (RFC 9602)
    ]),
  ],
];

// IPv6 global unicast is 2000::/3 (RFC 4291 §2.4); anything outside it that no rule above names
// (and that carries no IPv4 address) is unassigned: nothing to connect to.
const GLOBAL_UNICAST = list([['2000::', 3, 'ipv6']]);

/**
 * The 16 bytes of an IPv6 address, or null. Node validates (`isIP`) and the WHATWG URL parser
 * canonicalises (lowercase, `::` compressed, a trailing dotted quad rewritten as two groups), so
 * all this does is expand `::` — see docs/adr/0018 for why this is not a library. A zone
 * (`fe80::1%eth0`) names an interface, not another address: it is dropped before judging.
 */
export function ipv6Bytes(address: string): Uint8Array | null {
  const bare = address.replace(/%.*$/s, '');
  if (isIP(bare) !== 6) return null;
  let canonical: string;
  try {
    canonical = new URL(`http://[${bare}]/`).hostname.slice(1, -1);
  } catch {
    return null;
  }
  const [head, tail] = canonical.includes('::') ? canonical.split('::') : [canonical, undefined];
  const left = head === '' ? [] : head!.split(':');
  const right = tail === undefined || tail === '' ? [] : tail.split(':');
  const groups = tail === undefined ? left : [...left, ...Array<string>(8 - left.length - right.length).fill('0'), ...right];
  if (groups.length !== 8) return null;
  const bytes = new Uint8Array(16);
  groups.forEach((group, i) => {
    const value = parseInt(group, 16);
    bytes[i * 2] = value >> 8;
    bytes[i * 2 + 1] = value & 255;
  });
  return bytes;
}

const dotted = (b: Uint8Array, at: number, xor = 0): string => [0, 1, 2, 3].map((i) => (b[at + i]! ^ xor).toString()).join('.');
const zeros = (b: Uint8Array, from: number, to: number): boolean => b.subarray(from, to).every((x) => x === 0);
const word = (b: Uint8Array, at: number): number => (b[at]! << 8) | b[at + 1]!;

/**
 * The IPv4 addresses an IPv6 address carries, each judged as IPv4, and whether the form itself
 * is deprecated. Null: no embedded IPv4 address.
 */
function embeddedIpv4(b: Uint8Array): { readonly addresses: readonly string[]; readonly deprecated: boolean } | null {
  // ::ffff:a.b.c.d, IPv4-mapped (RFC 4291 §2.5.5.2).
  if (zeros(b, 0, 10) && word(b, 10) === 0xffff) return { addresses: [dotted(b, 12)], deprecated: false };
  // ::ffff:0:a.b.c.d, IPv4-translated (RFC 2765 §2.1; withdrawn with SIIT's revision).
  if (zeros(b, 0, 8) && word(b, 8) === 0xffff && word(b, 10) === 0) return { addresses: [dotted(b, 12)], deprecated: true };
  // ::a.b.c.d, IPv4-compatible (RFC 4291 §2.5.5.1, deprecated). :: and ::1 are their own classes.
  if (zeros(b, 0, 12) && !zeros(b, 12, 15)) return { addresses: [dotted(b, 12)], deprecated: true };
  // 64:ff9b::/96, the NAT64 well-known prefix (RFC 6052): the translator dials the IPv4 address.
  if (word(b, 0) === 0x64 && word(b, 2) === 0xff9b && zeros(b, 4, 12)) return { addresses: [dotted(b, 12)], deprecated: false };
  // 2002::/16, 6to4 (RFC 3056): the tunnel endpoint is bits 16-48.
  if (word(b, 0) === 0x2002) return { addresses: [dotted(b, 2)], deprecated: false };
  // 2001::/32, Teredo (RFC 4380): the server is bits 32-64; the client is the last 32 bits,
  // inverted. Either one may be the address a relay ends up dialling, so both are judged.
  if (word(b, 0) === 0x2001 && word(b, 2) === 0) return { addresses: [dotted(b, 4), dotted(b, 12, 0xff)], deprecated: false };
  return null;
}

/**
 * The class that refuses `address`, or null for an ordinary public address. Not an IP address
 * at all is 'reserved' (nothing to connect to). An IPv6 form that carries an IPv4 address is
 * judged by that address (the first refused one wins), then by whether the form is deprecated.
 */
export function classifyAddress(address: string): RefusedAddressClass | null {
  const bare = (address.startsWith('[') && address.endsWith(']') ? address.slice(1, -1) : address).replace(/%.*$/s, '');
  const family = isIP(bare);
  if (family === 0) return 'reserved';
  if (family === 4) return classifyBlocks(bare, 'ipv4');
  const bytes = ipv6Bytes(bare);
  if (bytes === null) return 'reserved';
  const own = classifyBlocks(bare, 'ipv6');
  if (own !== null) return own;
  const embedded = embeddedIpv4(bytes);
  if (embedded !== null) {
    // A metadata endpoint in either half of a Teredo address outranks a private one in the other:
    // allowPrivateAddresses admits every class but metadata.
    const classes = embedded.addresses.map((v4) => classifyBlocks(v4, 'ipv4'));
    if (classes.includes('metadata')) return 'metadata';
    return classes.find((c) => c !== null) ?? (embedded.deprecated ? 'deprecated' : null);
  }
  return GLOBAL_UNICAST.check(bare, 'ipv6') ? null : 'reserved';
}

function classifyBlocks(address: string, type: 'ipv4' | 'ipv6'): RefusedAddressClass | null {
  if (METADATA.check(address, type)) return 'metadata';
  for (const [name, blocks] of CLASSES) if (blocks.check(address, type)) return name;
  return null;
}
