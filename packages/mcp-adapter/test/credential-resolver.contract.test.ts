import { describeCredentialResolverContract } from '@veetbot/port-contracts';
import { MutableCredentials } from './helpers/fakes';

// docs/adr/0030: the adapter's tests resolve through this fake (credential-broker is not in this
// package's row); it runs the one CredentialResolver contract the real broker runs, so a
// rotation, a missing value or a malformed reference behaves here as it does in production.
describeCredentialResolverContract('MutableCredentials (mcp-adapter tests)', () => {
  const credentials = new MutableCredentials();
  return {
    resolver: credentials,
    provide: (name, value) => {
      credentials.values.set(`env:${name}`, value);
      return `env:${name}`;
    },
    missing: (name) => `env:${name}`,
  };
});
