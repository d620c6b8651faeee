import { randomBytes } from 'node:crypto';
import { mkdtemp, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import type { TenantSecretRow } from '@veetbot/ports';
import { describeCredentialResolverContract, type CredentialResolverSubject } from '@veetbot/port-contracts';
import { afterAll } from 'vitest';
import { DefaultCredentialResolver, operatorCredentialBroker, SecretKeyring, secretKey } from '../src/index';
import { TenantScopedCredentialResolvers } from '../src/tenant-scoped-credential-resolvers';

// docs/adr/0030: every resolver this package hands out runs the one CredentialResolver
// contract. The reference grammar, the file rules and the keyring stay in their own tests.

/** A resolver over a mutable environment map (`env:NAME`). */
function overEnv(
  resolverOf: (env: Record<string, string | undefined>) => CredentialResolverSubject['resolver'],
): CredentialResolverSubject {
  const env: Record<string, string | undefined> = {};
  return {
    resolver: resolverOf(env),
    provide: (name, value) => {
      env[name] = value;
      return `env:${name}`;
    },
    missing: (name) => `env:${name}`,
  };
}

const folders: string[] = [];
afterAll(async () => {
  await Promise.all(folders.map((folder) => rm(folder, { recursive: true, force: true })));
});

describeCredentialResolverContract('DefaultCredentialResolver, env:', () => overEnv((env) => new DefaultCredentialResolver({ env })), {
  refuses: 'secret:API_TOKEN',
});

describeCredentialResolverContract(
  'DefaultCredentialResolver, file: inside an allowed root',
  async () => {
    const folder = await mkdtemp(join(tmpdir(), 'credential-contract-'));
    folders.push(folder);
    return {
      resolver: new DefaultCredentialResolver({ env: {}, allowFileRoots: [folder] }),
      provide: async (name, value) => {
        await writeFile(join(folder, name), `${value}\n`);
        return `file:${join(folder, name)}`;
      },
      missing: (name) => `file:${join(folder, name)}`,
    };
  },
  { refuses: 'secret:API_TOKEN' },
);

describeCredentialResolverContract(
  'TenantScopedCredentialResolvers, an operator server',
  () => overEnv((env) => new TenantScopedCredentialResolvers({ env, secrets: null, keyring: null }).forServer('tenant-a', 'operator')),
  {
    refuses: 'secret:API_TOKEN',
  },
);

describeCredentialResolverContract(
  'operatorCredentialBroker, an operator server',
  () => overEnv((env) => operatorCredentialBroker({ env }).forServer('tenant-a', 'operator')),
  { refuses: 'secret:API_TOKEN' },
);

describeCredentialResolverContract(
  "TenantScopedCredentialResolvers, a tenant's server (sealed secret:NAME)",
  () => {
    const keyring = new SecretKeyring(secretKey(randomBytes(32)));
    const rows = new Map<string, TenantSecretRow>();
    const tenantId = 'tenant-a';
    const broker = new TenantScopedCredentialResolvers({
      env: { API_TOKEN: 'an operator value a tenant never sees' },
      secrets: { get: async (t, n) => rows.get(`${t}/${n}`) ?? null },
      keyring,
    });
    return {
      resolver: broker.forServer(tenantId, 'tenant'),
      provide: (name, value) => {
        rows.set(`${tenantId}/${name}`, {
          tenantId,
          name,
          ...keyring.seal({ tenantId, name }, value),
          createdAt: new Date(0),
          rotatedAt: null,
        });
        return `secret:${name}`;
      },
      missing: (name) => `secret:${name}`,
    };
  },
  { refuses: 'env:API_TOKEN' },
);
