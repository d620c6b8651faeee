import { randomBytes } from 'node:crypto';
import { describe, expect, it } from 'vitest';
import { CredentialError, openMcpConsentFlow, SecretKeyring, sealMcpConsentFlow, secretKey } from '../src/index';

/** docs/adr/0082: a pending consent's flow opens for exactly its (tenant, principal, server, consent). */
describe('sealed MCP consent flows', () => {
  const ring = new SecretKeyring(secretKey(randomBytes(32)));
  const owner = { tenantId: 't1', principalId: 'alice', serverId: 'acme', consentId: 'c1' };
  const plain = JSON.stringify({ codeVerifier: `v-${randomBytes(16).toString('hex')}` });

  it('round-trips, and the ciphertext does not hold the plaintext', () => {
    const sealed = sealMcpConsentFlow(ring, owner, plain);
    expect(Buffer.from(sealed.ciphertext).toString('latin1')).not.toContain(plain.slice(18));
    expect(openMcpConsentFlow(ring, owner, sealed)).toBe(plain);
  });

  it('does not open for another tenant, principal, server or consent, nor as a tenant secret', () => {
    const sealed = sealMcpConsentFlow(ring, owner, plain);
    for (const other of [
      { ...owner, tenantId: 't2' },
      { ...owner, principalId: 'bob' },
      { ...owner, serverId: 'docs' },
      { ...owner, consentId: 'c2' },
    ]) {
      expect(() => openMcpConsentFlow(ring, other, sealed)).toThrow(CredentialError);
    }
    expect(() => ring.open({ tenantId: 't1', name: 'ACME_TOKEN' }, sealed)).toThrow(CredentialError);
  });

  it('refuses a flow larger than 64 KiB', () => {
    expect(() => sealMcpConsentFlow(ring, owner, 'x'.repeat(65_537))).toThrow(CredentialError);
  });
});
