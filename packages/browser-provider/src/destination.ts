import { isIP } from 'node:net';
import type { EgressPolicy } from '@veetbot/ports';

/** Where a proxied request may go: the one address the check resolved, pinned for the dial. */
export type DestinationDecision =
  | { readonly allowed: true; readonly address: string; readonly port: number }
  | { readonly allowed: false; readonly code: string };

export interface DestinationCheckOptions {
  /** The operator's egress policy (the one MCP egress uses): scheme, allowlist, DNS, address classes. */
  readonly egress: EgressPolicy;
  /**
   * FOR TESTS ONLY (VEETBOT_BROWSER_ALLOW_LOOPBACK): loopback destinations (127.0.0.0/8, ::1,
   * localhost) are admitted over http and https without asking the policy. Nothing else is
   * widened: a private or metadata address stays refused by the policy.
   */
  readonly allowLoopback?: boolean;
}

const LOOPBACK_V4 = /^127\.\d{1,3}\.\d{1,3}\.\d{1,3}$/;

function loopbackAddress(host: string): string | null {
  if (host === 'localhost' || host.endsWith('.localhost')) return '127.0.0.1';
  if (isIP(host) === 4 && LOOPBACK_V4.test(host)) return host;
  if (host === '::1' || host === '[::1]') return '::1';
  return null;
}

/** Ports a URL may name: 1-65535. */
function validPort(port: number): boolean {
  return Number.isInteger(port) && port >= 1 && port <= 65_535;
}

/**
 * Every request the browser makes is judged here (docs/adr/0079): a URL for plain requests, a
 * host and port for CONNECT tunnels (judged as https). The policy resolves once and the proxy
 * dials exactly the address returned, so a second DNS answer never moves the connection.
 */
export class DestinationCheck {
  readonly #egress: EgressPolicy;
  readonly #allowLoopback: boolean;

  constructor(options: DestinationCheckOptions) {
    this.#egress = options.egress;
    this.#allowLoopback = options.allowLoopback ?? false;
  }

  async checkUrl(url: string): Promise<DestinationDecision> {
    let parsed: URL;
    try {
      parsed = new URL(url);
    } catch {
      return { allowed: false, code: 'egress.url_invalid' };
    }
    if (parsed.protocol !== 'http:' && parsed.protocol !== 'https:') return { allowed: false, code: 'egress.scheme_refused' };
    const port = parsed.port === '' ? (parsed.protocol === 'https:' ? 443 : 80) : Number(parsed.port);
    if (!validPort(port)) return { allowed: false, code: 'egress.url_invalid' };
    const host = parsed.hostname.replace(/^\[|\]$/g, '').toLowerCase();
    if (this.#allowLoopback && parsed.username === '' && parsed.password === '') {
      const loopback = loopbackAddress(host);
      if (loopback !== null) return { allowed: true, address: loopback, port };
    }
    const decision = await this.#egress.check(parsed.href);
    if (!decision.allowed) return { allowed: false, code: decision.code };
    return { allowed: true, address: decision.address, port };
  }

  /** A CONNECT target `host:port`: what travels inside is TLS, so it is judged as https. */
  async checkTunnel(authority: string): Promise<DestinationDecision> {
    const match = /^(\[[0-9a-fA-F:.]+\]|[^:[\]/@\s]+):(\d{1,5})$/.exec(authority);
    if (match === null) return { allowed: false, code: 'egress.url_invalid' };
    const port = Number(match[2]);
    if (!validPort(port)) return { allowed: false, code: 'egress.url_invalid' };
    return this.checkUrl(`https://${match[1]!}:${port}/`);
  }
}
