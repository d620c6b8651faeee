import { describe, expect, it } from 'vitest';
import { classifyAddress, METADATA_ENDPOINTS } from '../src/egress/address-classes';
import { DefaultEgressPolicy, validateServerConfig } from '../src/index';

/**
 * docs/adr/0053: every cloud metadata endpoint in the one list is refused whatever the switches
 * say. Each row is checked with EVERY switch on — plain http, private addresses, and the host
 * itself on the allowlist — at write time (an operator server's URL), at dial time as a literal,
 * and at dial time as the answer for an allowed name; an IPv4 row also in its IPv4-mapped and
 * NAT64 forms (ADR 0018 judges those by the IPv4 address they carry).
 */
const addresses = METADATA_ENDPOINTS.filter((e) => e.kind !== 'name');
const names = METADATA_ENDPOINTS.filter((e) => e.kind === 'name');

const canonical = (host: string) => (host.includes(':') ? new URL(`http://[${host}]/`).hostname.slice(1, -1) : host);

const everySwitch = (host: string, resolve?: (host: string) => Promise<{ address: string; family: number }[]>) =>
  new DefaultEgressPolicy({
    allowHttp: true,
    allowPrivateAddresses: true,
    // The host as written and as the URL parser canonicalises it (`::ffff:a9fe:a9fe`).
    allowHosts: [host, canonical(host), 'cloud.example.com'],
    ...(resolve === undefined ? {} : { resolve }),
  });

const literal = (address: string) => (address.includes(':') ? `[${address}]` : address);

/** The forms of one address to refuse: itself, and for IPv4 the IPv6 forms that carry it. */
function formsOf(address: string, kind: 'ipv4' | 'ipv6' | 'name'): string[] {
  if (kind !== 'ipv4') return [address];
  const [a, b, c, d] = address.split('.').map(Number) as [number, number, number, number];
  const hex = `${((a << 8) | b).toString(16)}:${((c << 8) | d).toString(16)}`;
  return [address, `::ffff:${address}`, `::ffff:${hex}`, `64:ff9b::${hex}`];
}

describe('cloud metadata endpoints: refused whatever the switches say (docs/adr/0053)', () => {
  it('the list names every cloud the README promises, IPv4 and IPv6', () => {
    const hosts = METADATA_ENDPOINTS.map((e) => e.host);
    for (const host of [
      '169.254.169.254', // AWS, GCP, Azure, Oracle, DigitalOcean, Hetzner, OpenStack
      'fd00:ec2::254', // AWS IPv6
      'fd20:ce::254', // GCP IPv6
      'metadata.google.internal', // GCP name
      '168.63.129.16', // Azure WireServer
      '100.100.100.200', // Alibaba
      '192.0.0.192', // Oracle
      '169.254.0.23', // Tencent
    ])
      expect(hosts).toContain(host);
    expect(new Set(hosts).size).toBe(hosts.length);
  });

  describe.each(addresses.flatMap((e) => formsOf(e.host, e.kind).map((form) => [form, e.clouds] as const)))('%s (%s)', (address) => {
    it('is classified metadata', () => {
      expect(classifyAddress(address)).toBe('metadata');
    });

    it('is refused as a literal URL, at write time and at dial time, over https and http', async () => {
      const policy = everySwitch(address);
      for (const scheme of ['https', 'http']) {
        const url = `${scheme}://${literal(address)}/mcp`;
        expect(policy.checkStatic(url), url).toMatchObject({ allowed: false, code: 'egress.address_refused' });
        expect(await policy.check(url), url).toMatchObject({ allowed: false, code: 'egress.address_refused' });
      }
    });

    it('is refused as what an allowed name resolves to (alone, or beside a public address)', async () => {
      const family = address.includes(':') ? 6 : 4;
      const alone = everySwitch(address, async () => [{ address, family }]);
      expect(await alone.check('https://cloud.example.com/mcp')).toMatchObject({ allowed: false, code: 'egress.address_refused' });
      const mixed = everySwitch(address, async () => [
        { address: '93.184.216.34', family: 4 },
        { address, family },
      ]);
      expect(await mixed.check('https://cloud.example.com/mcp')).toMatchObject({ allowed: false, code: 'egress.address_refused' });
    });

    it("is refused as an operator server's endpoint and token endpoint", () => {
      const verdict = validateServerConfig(
        {
          serverId: 'meta',
          transport: 'http',
          endpoint: `http://${literal(address)}/mcp`,
          authScheme: 'oauth2_client',
          credentialRef: 'env:PAIR',
          tokenEndpoint: `http://${literal(address)}/token`,
        },
        { source: 'operator', egress: everySwitch(address) },
      );
      expect(verdict.ok).toBe(false);
      const codes = verdict.ok ? [] : verdict.errors.map((e) => e.code).sort();
      expect(codes).toEqual(['mcp.config.endpoint_refused', 'mcp.config.token_endpoint_refused']);
    });
  });

  describe.each(names.map((e) => [e.host, e.clouds] as const))('the name %s (%s)', (name) => {
    it('is refused before any lookup, even on the allowlist and resolving to a public address', async () => {
      let lookups = 0;
      const policy = everySwitch(name, async () => {
        lookups += 1;
        return [{ address: '93.184.216.34', family: 4 }];
      });
      for (const url of [`https://${name}/computeMetadata/v1/`, `http://${name.toUpperCase()}./latest/meta-data/`]) {
        expect(policy.checkStatic(url), url).toMatchObject({ allowed: false, code: 'egress.address_refused' });
        expect(await policy.check(url), url).toMatchObject({ allowed: false, code: 'egress.address_refused' });
      }
      expect(lookups).toBe(0);
    });
  });

  it('an ordinary address beside them still passes with the same switches (the refusal is the list, not the switches)', async () => {
    const policy = everySwitch('127.0.0.1');
    expect(await policy.check('http://127.0.0.1:8080/mcp')).toMatchObject({ allowed: true, address: '127.0.0.1' });
    expect(await everySwitch('fd20:ce::253').check('http://[fd20:ce::253]/mcp')).toMatchObject({ allowed: true });
    expect(classifyAddress('169.254.169.253')).toBe('link_local');
  });
});
