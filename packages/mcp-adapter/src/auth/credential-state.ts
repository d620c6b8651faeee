import { sha256Hex, VeetbotError } from '@veetbot/domain';
import type { CredentialResolver, EgressPolicy, SecretValue } from '@veetbot/ports';
import type { McpServerConfig } from '../config/server-config';
import { McpAuthError } from '../errors';
import { exchangeClientCredentials, type AccessToken } from './oauth2-client-credentials';

/** § Authentication: "exchanges again inside that window" — the fixed skew. */
export const TOKEN_EXPIRY_SKEW_MS = 60_000;

export type ReauthenticationOutcome = 'renewed' | 'unchanged' | 'failed';

export interface CredentialStateDeps {
  readonly credentials: CredentialResolver;
  readonly egress: EgressPolicy;
  readonly now: () => Date;
  readonly requestTimeoutMs: number;
  readonly maxLineBytes: number;
  /** Told every value that is presented, so a server echoing it back can be scrubbed. */
  readonly onReveal: (value: string) => void;
}

/**
 * One connection's credential (§ Authentication: "The resolved value belongs to the
 * connection, not to the session"). Resolved from the broker when the connection is made,
 * presented as a header built at the moment of each request (or as the one environment
 * variable of a stdio child), compared by fingerprint for the ladder's step 3, and gone when
 * the connection goes. Nothing else holds it.
 */
export class CredentialState {
  readonly #config: McpServerConfig;
  readonly #deps: CredentialStateDeps;
  #secret: SecretValue | null = null;
  #token: AccessToken | null = null;
  #exchange: Promise<AccessToken> | null = null;
  /** sha256 of the last value presented to the server; never the value. */
  #presented: string | null = null;

  constructor(config: McpServerConfig, deps: CredentialStateDeps) {
    this.#config = config;
    this.#deps = deps;
  }

  get scheme(): McpServerConfig['authScheme'] {
    return this.#config.authScheme;
  }

  /** Connect time: resolve the reference; oauth2_client also exchanges. */
  async establish(): Promise<void> {
    if (this.#config.authScheme === 'none') return;
    this.#secret = await this.#resolve();
    if (this.#config.authScheme === 'oauth2_client') await this.#currentToken();
  }

  /** The headers for one request, built now (§ "compares the recorded expiry against the clock at the moment it builds a header"). */
  async headers(): Promise<Record<string, string>> {
    switch (this.#config.authScheme) {
      case 'bearer':
        return { authorization: `Bearer ${this.#present(this.#requireSecret().reveal())}` };
      case 'header':
        return { [this.#config.authName!.toLowerCase()]: this.#present(this.#requireSecret().reveal()) };
      case 'oauth2_client':
        return { authorization: `Bearer ${this.#present((await this.#currentToken()).value)}` };
      default:
        return {};
    }
  }

  /** The env scheme's one variable for a stdio spawn; the transport reveals it while building the environment. */
  environmentCredential(): { readonly name: string; readonly value: SecretValue } | undefined {
    if (this.#config.authScheme !== 'env') return undefined;
    const secret = this.#requireSecret();
    const present = (value: string) => this.#present(value);
    return {
      name: this.#config.authName!,
      value: {
        reveal: () => present(secret.reveal()),
        toString: () => secret.toString(),
        toJSON: () => secret.toJSON(),
      },
    };
  }

  /**
   * The ladder's step 2 and 3: one re-authentication. oauth2_client discards its token and
   * exchanges again; every other scheme re-resolves the reference (an operator may have
   * rotated it). 'unchanged' when the new value is byte-identical to the one that failed.
   */
  async reauthenticate(): Promise<ReauthenticationOutcome> {
    const failed = this.#presented;
    try {
      this.#secret = await this.#resolve();
      let fresh: string;
      if (this.#config.authScheme === 'oauth2_client') {
        this.#token = null;
        this.#exchange = null;
        fresh = (await this.#currentToken()).value;
      } else {
        fresh = this.#secret.reveal();
      }
      const digest = sha256Hex(fresh);
      if (digest === failed) return 'unchanged';
      this.#deps.onReveal(fresh);
      return 'renewed';
    } catch {
      return 'failed';
    }
  }

  #present(value: string): string {
    this.#deps.onReveal(value);
    this.#presented = sha256Hex(value);
    return value;
  }

  #requireSecret(): SecretValue {
    if (this.#secret === null) throw new McpAuthError('tool.auth_failed', 'The credential was not resolved.');
    return this.#secret;
  }

  async #resolve(): Promise<SecretValue> {
    const ref = this.#config.credentialRef;
    if (ref === null) throw new McpAuthError('tool.auth_failed', 'The configuration names no credential.');
    try {
      return await this.#deps.credentials.resolve(ref);
    } catch (cause) {
      throw new McpAuthError('tool.auth_failed', `The credential reference could not be resolved${VeetbotError.isInstance(cause) ? ` (${cause.code})` : ''}.`, cause);
    }
  }

  /** A token valid beyond the skew window, exchanging at most once at a time. */
  async #currentToken(): Promise<AccessToken> {
    const token = this.#token;
    const now = this.#deps.now().getTime();
    if (token !== null && (token.expiresAt === null || now < token.expiresAt.getTime() - TOKEN_EXPIRY_SKEW_MS)) return token;
    this.#exchange ??= exchangeClientCredentials({
      tokenEndpoint: this.#config.tokenEndpoint!,
      scopes: this.#config.tokenScopes,
      client: this.#requireSecret(),
      egress: this.#deps.egress,
      now: this.#deps.now,
      timeoutMs: this.#deps.requestTimeoutMs,
      maxLineBytes: this.#deps.maxLineBytes,
      onReveal: this.#deps.onReveal,
    }).finally(() => {
      this.#exchange = null;
    });
    const fresh = await this.#exchange;
    this.#token = fresh;
    return fresh;
  }
}
