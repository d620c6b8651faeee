import { describe, expect, it } from 'vitest';
import * as surface from '../src/index';

// The names this package's entry exports at run time (docs/adr/0031): a name is here only
// because another workspace package imports it; what only this package (or its own tests) uses
// stays off the entry and is imported by relative path. Type-only exports are invisible at run time and are
// not listed. To change the surface, edit src/index.ts and this list in the same commit.
const PUBLIC_SURFACE = [
  'CredentialError',
  'DefaultCredentialResolver',
  'GENERATED_KEY_FILE',
  'SecretKeyring',
  'decodeSecretKey',
  'loadSecretKeyring',
  'openMcpConsentFlow',
  'openCredentialBroker',
  'operatorCredentialBroker',
  'reencryptMcpDelegatedGrants',
  'reencryptTenantSecrets',
  'SealedMcpTokenStore',
  'sealMcpConsentFlow',
  'secretKey',
];

describe('@veetbot/credential-broker public surface', () => {
  it('exports at run time exactly the names other workspace packages import', () => {
    expect(Object.keys(surface).sort()).toEqual([...PUBLIC_SURFACE].sort());
  });
});
