import type { EgressDecision, EgressPolicy } from '@veetbot/ports';
import { describe, expect, it } from 'vitest';

/** One DNS answer, as a resolver gives it. */
export interface ResolvedAnswer {
  readonly address: string;
  readonly family: number;
}

export interface EgressPolicySubject {
  /** The policy under test, resolving host names through `resolve` (never the system's DNS). */
  make(resolve: (host: string) => Promise<readonly ResolvedAnswer[]>): EgressPolicy;
  /** An https URL with a host name this configuration admits when the name resolves to a public address. */
  readonly admits: string;
}

type Refusal = Extract<EgressDecision, { allowed: false }>;

/**
 * ports.EgressPolicy (ports/mcp.ts), stated once for every configuration a process builds (the
 * default, the operator's `mcp.egress`, the tenants' `mcp.tenant_egress`, the tests' loopback
 * one). RULINGS.md "Egress": https (http only where allowed), a host allowlist, a deny of
 * loopback, private, link-local and metadata addresses unless allowed explicitly — metadata
 * never; "Resolve once, check the address, connect to that address". What differs between
 * configurations (http, private addresses, the allowlist) is the implementation's own test.
 */
export function describeEgressPolicyContract(name: string, subject: EgressPolicySubject): void {
  const PUBLIC: ResolvedAnswer = { address: '93.184.216.34', family: 4 };
  const METADATA = ['169.254.169.254', 'fd00:ec2::254', '::ffff:169.254.169.254'];
  const literal = (address: string) => (address.includes(':') ? `[${address}]` : address);

  /** A policy whose resolver answers `answers` (or throws) and counts its calls. */
  function policy(answers: readonly ResolvedAnswer[] | Error = [PUBLIC]) {
    const asked: string[] = [];
    const made = subject.make(async (host) => {
      asked.push(host);
      if (answers instanceof Error) throw answers;
      // localhost answers as it does everywhere: a policy may judge it by its name or by its address.
      if (host === 'localhost') return [{ address: '127.0.0.1', family: 4 }];
      return answers;
    });
    return { policy: made, asked };
  }

  const refusal = (decision: EgressDecision | { readonly allowed: true }): Refusal['code'] | 'allowed' =>
    decision.allowed ? 'allowed' : decision.code;

  describe(`EgressPolicy contract: ${name}`, () => {
    it('admits its URL once: the decision carries the parsed URL and the one address it checked', async () => {
      const { policy: p, asked } = policy([PUBLIC]);
      const decision = await p.check(subject.admits);
      expect(decision).toEqual({ allowed: true, url: new URL(subject.admits), address: PUBLIC.address, family: 4 });
      expect(asked).toHaveLength(1);
      expect(p.checkStatic(subject.admits)).toEqual({ allowed: true });
    });

    it('refuses a URL that does not parse, or carries user information, as egress.url_invalid', async () => {
      const { policy: p } = policy();
      const withUser = new URL(subject.admits);
      withUser.username = 'user';
      withUser.password = 'pw';
      for (const url of ['not a url', '', withUser.href]) {
        expect(refusal(await p.check(url)), url).toBe('egress.url_invalid');
        expect(refusal(p.checkStatic(url)), url).toBe('egress.url_invalid');
      }
    });

    it('refuses every scheme but http and https as egress.scheme_refused', async () => {
      const { policy: p, asked } = policy();
      const host = new URL(subject.admits).host;
      for (const url of [`ftp://${host}/`, `file:///etc/passwd`, `ws://${host}/`, 'javascript:alert(1)', 'data:text/plain,x']) {
        expect(refusal(await p.check(url)), url).toBe('egress.scheme_refused');
        expect(refusal(p.checkStatic(url)), url).toBe('egress.scheme_refused');
      }
      expect(asked).toEqual([]);
    });

    it('never admits a metadata address: literal, resolved, or one answer among public ones', async () => {
      for (const address of METADATA) {
        const host = `${new URL(subject.admits).protocol}//${literal(address)}/`;
        const { policy: direct } = policy();
        expect(refusal(await direct.check(host)), host).not.toBe('allowed');
        expect(refusal(direct.checkStatic(host)), host).not.toBe('allowed');
        const family = address.includes(':') ? 6 : 4;
        const { policy: resolved } = policy([{ address, family }]);
        expect(refusal(await resolved.check(subject.admits)), address).toBe('egress.address_refused');
        const { policy: mixed } = policy([PUBLIC, { address, family }]);
        expect(refusal(await mixed.check(subject.admits)), address).toBe('egress.address_refused');
      }
    });

    it('refuses a name that does not resolve, or resolves to nothing, as egress.resolve_failed', async () => {
      expect(refusal(await policy(new Error('ENOTFOUND')).policy.check(subject.admits))).toBe('egress.resolve_failed');
      expect(refusal(await policy([]).policy.check(subject.admits))).toBe('egress.resolve_failed');
    });

    it('checkStatic never resolves, and whatever it refuses check refuses with the same code', async () => {
      const { policy: p, asked } = policy();
      const base = new URL(subject.admits);
      const urls = [
        subject.admits,
        `http://${base.host}/`,
        'https://127.0.0.1/',
        'https://[::1]/',
        'https://10.0.0.1/',
        'https://localhost/',
        `https://${literal(METADATA[0]!)}/`,
        'https://not-on-any-list.invalid/',
        'gopher://x/',
      ];
      const statics = urls.map((url) => p.checkStatic(url));
      expect(asked).toEqual([]);
      for (const [i, url] of urls.entries()) {
        const verdict = statics[i]!;
        if (!verdict.allowed) expect(refusal(await p.check(url)), url).toBe(verdict.code);
      }
    });
  });
}
