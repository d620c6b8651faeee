import { sha256Hex, VeetbotError, type SecretRedactor } from '@veetbot/domain';
import type { CredentialResolver, EgressPolicy, SecretValue } from '@veetbot/ports';
import type { McpServerConfig } from '../config/server-config';
import { McpAuthError } from '../errors';
import { basicAuthorization, exchangeClientCredentials, type AccessToken } from './oauth2-client-credentials';

/** § Authentication: "exchanges again inside that window" — the fixed skew. */
export const TOKEN_EXPIRY_SKEW_MS = 60_000;

export type ReauthenticationOutcome = 'renewed' | 'unchanged' | 'failed';

export interface CredentialStateDeps {
  readonly credentials: CredentialResolver;
  readonly egress: EgressPolicy;
  readonly now: () => Date;
  readonly requestTimeoutMs: number;
  readonly maxLineBytes: number;
  /** Taught every secret resolved and every token received, so a server echoing one back is scrubbed. */
  readonly redactor: SecretRedactor;
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
  /** The secret last presented to the server (bearer, header, env), for the ladder's step 3. */
  #presentedSecret: SecretValue | null = null;
  /** sha256 of the last access token presented (oauth2_client); never the token. */
  #presentedToken: string | null = null;

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
        this.#presentedSecret = this.#requireSecret();
        return { authorization: this.#headerFromSecret((value) => `Bearer ${value}`) };
      case 'header':
        this.#presentedSecret = this.#requireSecret();
        return { [this.#config.authName!.toLowerCase()]: this.#headerFromSecret((value) => value) };
      case 'oauth2_client': {
        const token = (await this.#currentToken()).value;
        this.#presentedToken = sha256Hex(token);
        return { authorization: `Bearer ${token}` };
      }
      default:
        return {};
    }
  }

  /** The env scheme's one variable for a stdio spawn; the transport reveals it while building the environment. */
  environmentCredential(): { readonly name: string; readonly value: SecretValue } | undefined {
    if (this.#config.authScheme !== 'env') return undefined;
    const secret = this.#requireSecret();
    this.#presentedSecret = secret;
    return { name: this.#config.authName!, value: secret };
  }

  /**
   * The ladder's step 2 and 3: one re-authentication. oauth2_client discards its token and
   * exchanges again; every other scheme re-resolves the reference (an operator may have
   * rotated it). 'unchanged' when the new value is byte-identical to the one that failed.
   */
  async reauthenticate(): Promise<ReauthenticationOutcome> {
    const failedSecret = this.#presentedSecret;
    const failedToken = this.#presentedToken;
    try {
      this.#secret = await this.#resolve();
      if (this.#config.authScheme === 'oauth2_client') {
        this.#token = null;
        this.#exchange = null;
        const fresh = (await this.#currentToken()).value;
        return failedToken !== null && sha256Hex(fresh) === failedToken ? 'unchanged' : 'renewed';
      }
      return failedSecret !== null && this.#secret.equals(failedSecret) ? 'unchanged' : 'renewed';
    } catch {
      return 'failed';
    }
  }

  /**
   * § Authentication: "building a header" — one of the two places a SecretValue is revealed
   * (the other builds the stdio child's environment). Bearer, a named header and the token
   * request's client_secret_basic all build their header here.
   */
  #headerFromSecret(build: (value: string) => string): string {
    return build(this.#requireSecret().reveal());
  }

  #requireSecret(): SecretValue {
    if (this.#secret === null) throw new McpAuthError('tool.auth_failed', 'The credential was not resolved.');
    return this.#secret;
  }

  async #resolve(): Promise<SecretValue> {
    const ref = this.#config.credentialRef;
    if (ref === null) throw new McpAuthError('tool.auth_failed', 'The configuration names no credential.');
    try {
      const secret = await this.#deps.credentials.resolve(ref);
      secret.addTo(this.#deps.redactor);
      return secret;
    } catch (cause) {
      throw new McpAuthError(
        'tool.auth_failed',
        `The credential reference could not be resolved${VeetbotError.isInstance(cause) ? ` (${cause.code})` : ''}.`,
        cause,
      );
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
      authorization: () => this.#headerFromSecret((pair) => basicAuthorization(pair, this.#deps.redactor)),
      egress: this.#deps.egress,
      now: this.#deps.now,
      timeoutMs: this.#deps.requestTimeoutMs,
      maxLineBytes: this.#deps.maxLineBytes,
      redactor: this.#deps.redactor,
    }).finally(() => {
      this.#exchange = null;
    });
    const fresh = await this.#exchange;
    this.#token = fresh;
    return fresh;
  }
}
