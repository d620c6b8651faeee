import { CREDENTIAL_REF_KINDS, parseCredentialRef, type CredentialOrigin } from '@veetbot/domain';
import type { CredentialResolver, TenantCredentialResolvers, TenantSecretStore } from '@veetbot/ports';
import { DefaultCredentialResolver, type DefaultCredentialResolverOptions } from './default-credential-resolver';
import { CredentialError } from './errors';
import { Secret } from './secret';
import type { SecretKeyring } from './secret-crypto';
import { loadSecretKeyring, type LoadedKeyring } from './secret-keys';

export interface TenantScopedCredentialResolversOptions extends DefaultCredentialResolverOptions {
  /** The tenants' secrets (null: no `secret:` reference resolves). */
  readonly secrets: Pick<TenantSecretStore, 'get'> | null;
  /** Opens them (null: no `secret:` reference resolves). */
  readonly keyring: SecretKeyring | null;
}

/**
 * ADR 0017: the broker the MCP adapter asks, per server. The tenant and the server's origin
 * come through the port with every request, so there is no process-wide lookup a tenant could
 * steer: a tenant's server resolves `secret:NAME` inside that tenant only (its row, under its
 * row-level security, authenticated against its tenant id and the name), and `env:`/`file:`
 * only ever for the operator's own servers — even a tenant row written straight into the
 * database with `env:DATABASE_URL` is refused here, before anything is dialled.
 */
export class TenantScopedCredentialResolvers implements TenantCredentialResolvers {
  readonly #operator: DefaultCredentialResolver;
  readonly #secrets: Pick<TenantSecretStore, 'get'> | null;
  readonly #keyring: SecretKeyring | null;

  constructor(options: TenantScopedCredentialResolversOptions) {
    const { secrets, keyring, ...operator } = options;
    this.#operator = new DefaultCredentialResolver(operator);
    this.#secrets = secrets;
    this.#keyring = keyring;
  }

  forServer(tenantId: string, origin: CredentialOrigin): CredentialResolver {
    return { resolve: (credentialRef) => this.#resolve(tenantId, origin, credentialRef) };
  }

  async #resolve(tenantId: string, origin: CredentialOrigin, credentialRef: string): Promise<Secret> {
    const ref = parseCredentialRef(credentialRef);
    // A malformed reference may be a value pasted where a reference belongs: never echoed.
    if (ref === null) throw new CredentialError('credential.invalid_ref', null, 'Not a credential reference.');
    if (!CREDENTIAL_REF_KINDS[origin].includes(ref.kind)) {
      throw new CredentialError(
        'credential.ref_not_allowed',
        null,
        `A ${origin} server may use only ${CREDENTIAL_REF_KINDS[origin].map((k) => `${k}:`).join(' or ')} references.`,
      );
    }
    if (ref.kind !== 'secret') return this.#operator.resolve(credentialRef);
    if (this.#secrets === null || this.#keyring === null) {
      throw new CredentialError(
        'credential.not_found',
        credentialRef,
        `Credential ${credentialRef}: tenant secrets are not configured in this process.`,
      );
    }
    const row = await this.#secrets.get(tenantId, ref.name);
    if (row === null)
      throw new CredentialError('credential.not_found', credentialRef, `Credential ${credentialRef}: the tenant holds no such secret.`);
    return new Secret(this.#keyring.open({ tenantId, name: ref.name }, row));
  }
}

/** Operator-only resolution (the CLI's `mcp check`, tests of operator servers): no tenant secrets. */
export function operatorCredentialBroker(options: DefaultCredentialResolverOptions = {}): TenantCredentialResolvers {
  return new TenantScopedCredentialResolvers({ ...options, secrets: null, keyring: null });
}

/**
 * The one composition both the api and the worker call (ADR 0017): the key from the operator's
 * environment or file (or the data folder's, generated once), and a broker over the tenants'
 * sealed secrets. The api also seals with the returned keyring.
 */
export async function openCredentialBroker(options: {
  readonly env: Readonly<Record<string, string | undefined>>;
  readonly dataDir: string | null;
  readonly secrets: Pick<TenantSecretStore, 'get'>;
  readonly allowFileRoots?: readonly string[];
}): Promise<{ readonly broker: TenantScopedCredentialResolvers; readonly keys: LoadedKeyring }> {
  const keys = await loadSecretKeyring({ env: options.env, dataDir: options.dataDir });
  const broker = new TenantScopedCredentialResolvers({
    secrets: options.secrets,
    keyring: keys.keyring,
    ...(options.allowFileRoots === undefined ? {} : { allowFileRoots: options.allowFileRoots }),
  });
  return { broker, keys };
}
