import { lookup } from 'node:dns/promises';
import { isIP } from 'node:net';
import type { EgressDecision, EgressPolicy } from '@veetbot/ports';
import { classifyAddress, isMetadataHostName } from './address-classes';

export interface ResolvedAddress {
  readonly address: string;
  readonly family: number;
}

export interface DefaultEgressPolicyOptions {
  /** Plain http is refused unless the operator allows it. */
  readonly allowHttp?: boolean;
  /** Exact host names, or `*.suffix` for any subdomain of suffix. Empty or absent: any public host. */
  readonly allowHosts?: readonly string[];
  /** Loopback, private and link-local destinations (tests set this). Metadata endpoints (METADATA_ENDPOINTS) stay refused. */
  readonly allowPrivateAddresses?: boolean;
  /** The resolver (default: the system's, every address). Called once per check. */
  readonly resolve?: (host: string) => Promise<readonly ResolvedAddress[]>;
}

type Refusal = Extract<EgressDecision, { allowed: false }>;
const refuse = (code: Refusal['code'], message: string): Refusal => ({ allowed: false, code, message });

async function systemResolve(host: string): Promise<readonly ResolvedAddress[]> {
  return lookup(host, { all: true, verbatim: true });
}

/**
 * RULINGS.md "Egress": one policy for tenant MCP URLs, OAuth token endpoints and web tools.
 * https only (http where allowed), a host allowlist, and a refusal of loopback, private,
 * link-local, metadata, unspecified, multicast and reserved addresses unless private addresses
 * are allowed explicitly. `check` resolves once and returns the address it checked; the caller
 * connects to exactly that address (createPinnedFetch), so a second answer from DNS — a
 * rebinding — never redirects the connection. Every resolved address must pass: a name that
 * resolves to one public and one private address is refused.
 */
export class DefaultEgressPolicy implements EgressPolicy {
  readonly #allowHttp: boolean;
  readonly #allowHosts: readonly string[];
  readonly #allowPrivate: boolean;
  readonly #resolve: (host: string) => Promise<readonly ResolvedAddress[]>;

  constructor(options: DefaultEgressPolicyOptions = {}) {
    this.#allowHttp = options.allowHttp ?? false;
    this.#allowHosts = (options.allowHosts ?? []).map((h) => h.toLowerCase());
    this.#allowPrivate = options.allowPrivateAddresses ?? false;
    this.#resolve = options.resolve ?? systemResolve;
  }

  checkStatic(url: string): Refusal | { readonly allowed: true } {
    const parsed = this.#parse(url);
    if (!(parsed instanceof URL)) return parsed;
    const host = hostOf(parsed);
    if (isIP(host) !== 0) {
      const refused = this.#addressRefusal(host);
      if (refused !== null) return refused;
    } else if (!this.#allowPrivate && (host === 'localhost' || host.endsWith('.localhost'))) {
      return refuse('egress.address_refused', 'The host names the loopback interface.');
    }
    return { allowed: true };
  }

  async check(url: string): Promise<EgressDecision> {
    const parsed = this.#parse(url);
    if (!(parsed instanceof URL)) return parsed;
    const host = hostOf(parsed);
    const literal = isIP(host);
    if (literal !== 0) {
      const refused = this.#addressRefusal(host);
      return refused ?? { allowed: true, url: parsed, address: host, family: literal as 4 | 6 };
    }
    let addresses: readonly ResolvedAddress[];
    try {
      addresses = await this.#resolve(host);
    } catch {
      return refuse('egress.resolve_failed', 'The host name did not resolve.');
    }
    const usable = addresses.filter((a) => isIP(a.address) !== 0);
    if (usable.length === 0) return refuse('egress.resolve_failed', 'The host name resolved to no address.');
    for (const candidate of usable) {
      const refused = this.#addressRefusal(candidate.address);
      if (refused !== null) return refused;
    }
    const first = usable[0]!;
    return { allowed: true, url: parsed, address: first.address, family: isIP(first.address) as 4 | 6 };
  }

  #parse(url: string): URL | Refusal {
    let parsed: URL;
    try {
      parsed = new URL(url);
    } catch {
      return refuse('egress.url_invalid', 'The URL cannot be parsed.');
    }
    if (parsed.protocol !== 'https:' && !(parsed.protocol === 'http:' && this.#allowHttp)) {
      return refuse(
        'egress.scheme_refused',
        this.#allowHttp ? 'Only http and https URLs are permitted.' : 'Only https URLs are permitted.',
      );
    }
    // Credentials in a URL would travel in logs and Referer headers: configuration carries
    // credential references, never inline secrets.
    if (parsed.username !== '' || parsed.password !== '') return refuse('egress.url_invalid', 'A URL may not carry user information.');
    if (parsed.hostname === '') return refuse('egress.url_invalid', 'The URL has no host.');
    // A metadata service's own name is refused before the allowlist is read: no switch admits
    // it (METADATA_ENDPOINTS, docs/adr/0053); its address is refused again after resolution.
    if (isMetadataHostName(hostOf(parsed))) return refuse('egress.address_refused', 'The destination address is refused (metadata).');
    if (!this.#hostAllowed(hostOf(parsed))) return refuse('egress.host_not_allowed', 'The host is not on the egress allowlist.');
    return parsed;
  }

  #hostAllowed(host: string): boolean {
    if (this.#allowHosts.length === 0) return true;
    return this.#allowHosts.some((entry) =>
      entry.startsWith('*.') ? host.endsWith(entry.slice(1)) && host.length > entry.length - 1 : host === entry,
    );
  }

  #addressRefusal(address: string): Refusal | null {
    const cls = classifyAddress(address);
    if (cls === null) return null;
    if (this.#allowPrivate && cls !== 'metadata') return null;
    return refuse('egress.address_refused', `The destination address is refused (${cls}).`);
  }
}

/** The host as a bare name or address: lowercase, IPv6 brackets removed, no trailing dot. */
export function hostOf(url: URL): string {
  let host = url.hostname.toLowerCase();
  if (host.startsWith('[') && host.endsWith(']')) host = host.slice(1, -1);
  if (host.endsWith('.')) host = host.slice(0, -1);
  return host;
}
