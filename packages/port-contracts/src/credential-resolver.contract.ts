import { inspect } from 'node:util';
import { SecretRedactor, VeetbotError } from '@veetbot/domain';
import type { CredentialResolver } from '@veetbot/ports';
import { describe, expect, it } from 'vitest';

export interface CredentialResolverSubject {
  readonly resolver: CredentialResolver;
  /**
   * Make `name` hold `value` where this resolver looks (an environment variable, a tenant's
   * sealed secret, ...) and return the credential_ref that names it. Called again for the same
   * name: a rotation.
   */
  provide(name: string, value: string): Promise<string> | string;
  /** A well-formed reference to a name nothing provides. */
  missing(name: string): string;
}

export interface CredentialResolverContractOptions {
  /** A well-formed reference of a kind this resolver refuses (ADR 0017: by the server's origin). */
  readonly refuses?: string;
}

/**
 * ports.CredentialResolver (ports/tool.ts), stated once. RULINGS.md "Credentials": a reference
 * resolves to a SecretValue "whose string and JSON forms never show the value"; § Authentication:
 * "A connection that is re-dialled re-resolves, which is what lets a rotation take effect without
 * a restart"; ADR 0018: comparing and scrubbing happen through the secret, without a reveal. A
 * refusal is a typed error (credential.*) that never shows the value nor a malformed reference.
 */
export function describeCredentialResolverContract(
  name: string,
  make: () => CredentialResolverSubject | Promise<CredentialResolverSubject>,
  options: CredentialResolverContractOptions = {},
): void {
  const VALUE = 'contract-secret-7f3a9c-NEVER-PRINTED';

  async function refusal(work: Promise<unknown>, hidden: readonly string[]): Promise<string> {
    const error = await work.then(
      () => {
        throw new Error('expected the resolution to fail');
      },
      (e: unknown) => e,
    );
    expect(VeetbotError.isInstance(error)).toBe(true);
    const e = error as VeetbotError;
    for (const shown of [e.message, String(e.stack), inspect(e, { depth: 10 }), JSON.stringify(e)]) {
      for (const text of hidden) expect(shown).not.toContain(text);
    }
    return e.code;
  }

  describe(`CredentialResolver contract: ${name}`, () => {
    it('resolves a reference to a SecretValue that reveals the value and shows it nowhere else', async () => {
      const subject = await make();
      const ref = await subject.provide('API_TOKEN', VALUE);
      const secret = await subject.resolver.resolve(ref);
      expect(secret.reveal()).toBe(VALUE);
      for (const shown of [
        String(secret),
        `${secret}`,
        secret.toString(),
        JSON.stringify(secret),
        JSON.stringify({ secret }),
        secret.toJSON(),
      ]) {
        expect(shown).not.toContain(VALUE);
      }
    });

    it('compares and teaches a redactor without a reveal (ADR 0018)', async () => {
      const subject = await make();
      const same = await subject.resolver.resolve(await subject.provide('API_TOKEN', VALUE));
      const again = await subject.resolver.resolve(await subject.provide('API_TOKEN', VALUE));
      const other = await subject.resolver.resolve(await subject.provide('OTHER_TOKEN', `${VALUE}-other`));
      expect(same.equals(again)).toBe(true);
      expect(same.equals(other)).toBe(false);
      const redactor = new SecretRedactor();
      same.addTo(redactor);
      expect(redactor.redactText(`the token is ${VALUE}.`)).not.toContain(VALUE);
    });

    it('re-resolves at every call: a rotated value takes effect at once', async () => {
      const subject = await make();
      const ref = await subject.provide('API_TOKEN', `${VALUE}-first`);
      expect((await subject.resolver.resolve(ref)).reveal()).toBe(`${VALUE}-first`);
      expect(await subject.provide('API_TOKEN', `${VALUE}-second`)).toBe(ref);
      expect((await subject.resolver.resolve(ref)).reveal()).toBe(`${VALUE}-second`);
    });

    it('refuses an absent credential as credential.not_found', async () => {
      const subject = await make();
      expect(await refusal(subject.resolver.resolve(subject.missing('ABSENT_TOKEN')), [VALUE])).toBe('credential.not_found');
    });

    it('refuses a malformed reference as credential.invalid_ref without echoing it (it may be a pasted value)', async () => {
      const subject = await make();
      for (const ref of [VALUE, '', 'vault:API_TOKEN']) {
        expect(await refusal(subject.resolver.resolve(ref), ref === '' ? [] : [ref])).toBe('credential.invalid_ref');
      }
    });

    const { refuses } = options;
    if (refuses !== undefined) {
      it(`refuses ${refuses.split(':')[0]}: references as credential.ref_not_allowed`, async () => {
        const subject = await make();
        expect(await refusal(subject.resolver.resolve(refuses), [VALUE])).toBe('credential.ref_not_allowed');
      });
    }
  });
}
