import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import {
  TRUST_ORDER,
  TrustLevel,
  callerTrustClaim,
  callerTrustMessage,
  clampTrust,
  isTrustBelow,
  minTrust,
  minimumTrust,
} from '../src/index';
import { trustRank } from '../src/trust';

// RULINGS.md "Vocabulary": PLATFORM > TRUSTED_CONFIGURATION > USER > INTERNAL_TOOL > EXTERNAL_UNTRUSTED.

const level = fc.constantFrom(...TrustLevel.options);

describe('trust order', () => {
  it('is highest first, as the rulings list it', () => {
    expect(TRUST_ORDER).toEqual(['platform', 'trusted_configuration', 'user', 'internal_tool', 'external_untrusted']);
    expect(TrustLevel.options).toEqual([...TRUST_ORDER]);
  });

  it('ranks strictly decrease down the list', () => {
    for (let i = 1; i < TRUST_ORDER.length; i++) {
      expect(trustRank(TRUST_ORDER[i - 1]!)).toBeGreaterThan(trustRank(TRUST_ORDER[i]!));
      expect(isTrustBelow(TRUST_ORDER[i]!, TRUST_ORDER[i - 1]!)).toBe(true);
      expect(isTrustBelow(TRUST_ORDER[i - 1]!, TRUST_ORDER[i]!)).toBe(false);
    }
    expect(isTrustBelow('user', 'user')).toBe(false);
  });

  it('rejects unknown or uppercase labels', () => {
    expect(TrustLevel.safeParse('USER').success).toBe(false);
    expect(TrustLevel.safeParse('trusted').success).toBe(false);
  });
});

describe('minTrust', () => {
  it.each([
    ['platform', 'user', 'user'],
    ['user', 'platform', 'user'],
    ['external_untrusted', 'platform', 'external_untrusted'],
    ['internal_tool', 'user', 'internal_tool'],
    ['trusted_configuration', 'trusted_configuration', 'trusted_configuration'],
  ] as const)('min(%s, %s) = %s', (a, b, expected) => {
    expect(minTrust(a, b)).toBe(expected);
  });

  it('is commutative and returns one of its arguments, the lower', () => {
    fc.assert(
      fc.property(level, level, (a, b) => {
        const m = minTrust(a, b);
        expect(minTrust(b, a)).toBe(m);
        expect([a, b]).toContain(m);
        expect(trustRank(m)).toBe(Math.min(trustRank(a), trustRank(b)));
      }),
    );
  });
});

describe('minimumTrust', () => {
  it('is the lowest label present', () => {
    expect(minimumTrust(['platform', 'user', 'trusted_configuration'], 'platform')).toBe('user');
    expect(minimumTrust(['user', 'external_untrusted', 'platform'], 'platform')).toBe('external_untrusted');
  });

  it('uses the fallback only when there are no items', () => {
    expect(minimumTrust([], 'platform')).toBe('platform');
    expect(minimumTrust([], 'external_untrusted')).toBe('external_untrusted');
    // With items present, the fallback does not participate.
    expect(minimumTrust(['user'], 'external_untrusted')).toBe('user');
  });

  it('accepts any iterable', () => {
    function* labels(): Generator<TrustLevel> {
      yield 'platform';
      yield 'internal_tool';
    }
    expect(minimumTrust(labels(), 'platform')).toBe('internal_tool');
    expect(minimumTrust(new Set<TrustLevel>(['user', 'platform']), 'platform')).toBe('user');
  });

  it('equals the minimum rank over a non-empty list', () => {
    fc.assert(
      fc.property(fc.array(level, { minLength: 1, maxLength: 10 }), level, (levels, fallback) => {
        const m = minimumTrust(levels, fallback);
        expect(trustRank(m)).toBe(Math.min(...levels.map(trustRank)));
      }),
    );
  });
});

describe('clampTrust', () => {
  it('never raises the declared trust, over all pairs', () => {
    for (const declared of TRUST_ORDER) {
      for (const claimed of TRUST_ORDER) {
        const clamped = clampTrust(declared, claimed);
        expect(trustRank(clamped)).toBeLessThanOrEqual(trustRank(declared));
        expect(clamped).toBe(isTrustBelow(claimed, declared) ? claimed : declared);
      }
    }
  });

  it('never raises (property)', () => {
    fc.assert(
      fc.property(level, fc.option(level, { nil: undefined }), (declared, claimed) => {
        expect(isTrustBelow(declared, clampTrust(declared, claimed))).toBe(false);
      }),
    );
  });

  it('keeps the declared trust when the tool claims none', () => {
    expect(clampTrust('user', null)).toBe('user');
    expect(clampTrust('user', undefined)).toBe('user');
    expect(clampTrust('external_untrusted', 'platform')).toBe('external_untrusted');
    expect(clampTrust('platform', 'external_untrusted')).toBe('external_untrusted');
  });
});

describe('what a caller may state (RULINGS.md 1; docs/adr/0051)', () => {
  it('finds the first label above user in context_trust, then in argument_trust', () => {
    expect(callerTrustClaim({ context_trust: ['user', 'internal_tool', 'external_untrusted'] })).toBeNull();
    expect(callerTrustClaim({ context_trust: ['user', 'platform'] })).toEqual({ path: ['context_trust', 1], label: 'platform' });
    expect(callerTrustClaim({ context_trust: ['trusted_configuration'] })).toEqual({
      path: ['context_trust', 0],
      label: 'trusted_configuration',
    });
    expect(callerTrustClaim({ context_trust: ['user'], argument_trust: { a: 'user', b: 'platform' } })).toEqual({
      path: ['argument_trust', 'b'],
      label: 'platform',
    });
    expect(callerTrustClaim({})).toBeNull();
    expect(callerTrustMessage({ path: [], label: 'platform' })).toContain('at most user trust, not platform');
  });
});
