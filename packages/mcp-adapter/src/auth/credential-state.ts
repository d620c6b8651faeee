import { sha256Hex, VeetbotError, type SecretRedactor } from '@veetbot/domain';
import type { CredentialResolver, EgressPolicy, SecretValue } from '@veetbot/ports';
import type { McpServerConfig } from '../config/server-config';
import { McpAuthError } from '../errors';
import { signClientAssertion, JWT_BEARER_ASSERTION_TYPE } from './client-assertion';
import { basicCredentials, chooseSecretAuthMethod, type ClientAuthentication } from './client-authentication';
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
  /** A pre-registered client's secret (docs/adr/0083): the delegated flow's token requests authenticate with it. */
  #clientSecret: SecretValue | null = null;
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
    if (this.#config.authScheme === 'none') {
      const ref = this.#config.oauthClient?.clientSecretRef ?? null;
      if (ref !== null) this.#clientSecret = await this.#resolve(ref);
      return;
    }
    this.#secret = await this.#resolve(this.#config.credentialRef);
    if (this.#config.authScheme === 'oauth2_client') await this.#currentToken();
  }

  /** The headers for one request, built now (§ "compares the recorded expiry against the clock at the moment it builds a header"). */
  async headers(): Promise<Record<string, string>> {
    switch (this.#config.authScheme) {
      case 'bearer':
        this.#presentedSecret = this.#requireSecret();
        return { authorization: this.#fromSecret(this.#requireSecret(), (value) => `Bearer ${value}`) };
      case 'header':
        this.#presentedSecret = this.#requireSecret();
        return { [this.#config.authName!.toLowerCase()]: this.#fromSecret(this.#requireSecret(), (value) => value) };
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
      this.#secret = await this.#resolve(this.#config.credentialRef);
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

  /** Whether the delegated flow's token requests authenticate a pre-registered client with its secret. */
  get hasClientSecret(): boolean {
    return this.#clientSecret !== null;
  }

  /**
   * docs/adr/0083: the delegated flow's token request (code exchange, refresh) for a
   * pre-registered client with a secret — client_secret_basic (the Authorization header) or,
   * where the authorization server offers only that, client_secret_post (client_id and
   * client_secret in the form) — built here, at the moment of the request, from the server's
   * `token_endpoint_auth_methods_supported`. The secret is taught to the redactor on resolution.
   */
  tokenRequestAuthentication(supportedMethods: unknown): ClientAuthentication {
    const client = this.#config.oauthClient;
    const secret = this.#clientSecret;
    if (client === undefined || secret === null)
      throw new McpAuthError('tool.auth_failed', 'No pre-registered client secret was resolved.');
    const configured = client.tokenEndpointAuthMethod === 'none' ? undefined : client.tokenEndpointAuthMethod;
    const method = chooseSecretAuthMethod(configured, supportedMethods);
    return this.#fromSecret(secret, (value) =>
      method === 'client_secret_basic'
        ? { headers: { authorization: basicCredentials(client.clientId, value) }, body: {} }
        : { headers: {}, body: { client_id: client.clientId, client_secret: value } },
    );
  }

  /**
   * oauth2_client's token request (§ Authentication): client_secret_basic from the
   * `client_id:client_secret` the reference resolves to, or — with the operator's
   * client_assertion (docs/adr/0083) — private_key_jwt, an RFC 7523 assertion signed with the
   * private key the reference resolves to. The assertion is taught to the redactor.
   */
  #clientCredentialsAuthentication(): ClientAuthentication {
    const assertion = this.#config.clientAssertion;
    const secret = this.#requireSecret();
    if (assertion === undefined)
      return { headers: { authorization: this.#fromSecret(secret, (pair) => basicAuthorization(pair, this.#deps.redactor)) }, body: {} };
    const jwt = this.#fromSecret(secret, (pem) =>
      signClientAssertion(pem, {
        clientId: assertion.clientId,
        audience: assertion.audience ?? this.#config.tokenEndpoint!,
        alg: assertion.alg,
        keyId: assertion.keyId,
        now: this.#deps.now(),
      }),
    );
    this.#deps.redactor.add(jwt);
    return { headers: {}, body: { client_assertion_type: JWT_BEARER_ASSERTION_TYPE, client_assertion: jwt } };
  }

  /**
   * § Authentication: the one place in this file a SecretValue is revealed — "building a
   * header" (bearer, a named header, a token request's client authentication: the
   * Authorization header, or its form twin client_secret_post and the private_key_jwt
   * assertion, docs/adr/0083). `build` makes the request's credential from the value and keeps
   * nothing; the other place builds the stdio child's environment.
   */
  #fromSecret<T>(secret: SecretValue, build: (value: string) => T): T {
    return build(secret.reveal());
  }

  #requireSecret(): SecretValue {
    if (this.#secret === null) throw new McpAuthError('tool.auth_failed', 'The credential was not resolved.');
    return this.#secret;
  }

  async #resolve(ref: string | null): Promise<SecretValue> {
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
      authenticate: () => this.#clientCredentialsAuthentication(),
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
