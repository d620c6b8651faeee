import { createServer, type IncomingMessage, type Server, type ServerResponse } from 'node:http';
import type { AddressInfo } from 'node:net';
import { createHash, randomBytes } from 'node:crypto';

/**
 * docs/adr/0077: one real HTTP server on loopback playing a protected resource (POST /mcp: 401
 * with RFC 9728 resource metadata until the bearer token is presented) and its authorization
 * server (RFC 8414 metadata, /authorize redirecting back with a code, /token, /register). Each
 * test scripts how it misbehaves through `script`.
 */
export interface AuthorizationScript {
  /** Merged over the authorization server metadata (a hostile endpoint, a wrong issuer). */
  metadata?: Record<string, unknown>;
  /** Replaces the protected resource metadata's fields. */
  resourceMetadata?: Record<string, unknown>;
  /** The token response body (default: a bearer token). */
  tokenResponse?: () => unknown;
  /** Bytes of padding in the metadata document (an oversized one). */
  metadataPadding?: number;
  /** Bytes of padding in the token response. */
  tokenPadding?: number;
  /** The `iss` the authorization response carries (RFC 9207); absent: none. */
  callbackIss?: string;
  /** A path that answers 302 to this Location. */
  redirectTo?: string;
  /** /mcp answers 403 insufficient_scope even to a valid token. */
  insufficientScope?: boolean;
}

export class ScriptedAuthorizationServer {
  script: AuthorizationScript = {};
  readonly requests: string[] = [];
  /** Every authorization request's query and token request's form, in order. */
  readonly authorizeQueries: URLSearchParams[] = [];
  readonly tokenForms: URLSearchParams[] = [];
  /** Every token request's Authorization header (undefined: none), in order. */
  readonly tokenAuthorizations: (string | undefined)[] = [];
  /** Every access and refresh token issued (distinct random values). */
  readonly issued: string[] = [];
  /** The access token /mcp accepts now (the last issued; null: none). */
  accepted: string | null = null;
  /** Codes issued and not yet redeemed, with their PKCE challenge (RFC 7636: checked at /token). */
  readonly #codes = new Map<string, string>();
  /** Every authorization code issued, in order. */
  readonly codesIssued: string[] = [];
  /** What /mcp echoes in its body once authorized (a server echoing the credential). */
  echo = '';
  #server: Server | null = null;
  #base = '';

  get base(): string {
    return this.#base;
  }

  get resourceUrl(): string {
    return `${this.#base}/mcp`;
  }

  async start(): Promise<void> {
    this.#server = createServer((req, res) => void this.#handle(req, res));
    await new Promise<void>((resolve) => this.#server!.listen(0, '127.0.0.1', resolve));
    this.#base = `http://127.0.0.1:${(this.#server.address() as AddressInfo).port}`;
  }

  async stop(): Promise<void> {
    this.#server?.closeAllConnections();
    await new Promise<void>((resolve) => this.#server?.close(() => resolve()) ?? resolve());
  }

  metadataDocument(): Record<string, unknown> {
    return {
      issuer: this.#base,
      authorization_endpoint: `${this.#base}/authorize`,
      token_endpoint: `${this.#base}/token`,
      registration_endpoint: `${this.#base}/register`,
      response_types_supported: ['code'],
      grant_types_supported: ['authorization_code', 'refresh_token'],
      code_challenge_methods_supported: ['S256'],
      token_endpoint_auth_methods_supported: ['none'],
      ...this.script.metadata,
    };
  }

  async #handle(req: IncomingMessage, res: ServerResponse): Promise<void> {
    const url = new URL(req.url ?? '/', this.#base);
    this.requests.push(`${req.method} ${url.pathname}`);
    let body = '';
    for await (const chunk of req) body += String(chunk);
    const json = (status: number, value: unknown, padding = 0) => {
      const text = JSON.stringify(padding > 0 ? { ...(value as object), padding: 'x'.repeat(padding) } : value);
      res.writeHead(status, { 'content-type': 'application/json' }).end(text);
    };
    if (url.pathname === '/redirect' && this.script.redirectTo !== undefined) {
      res.writeHead(302, { location: this.script.redirectTo }).end();
      return;
    }
    if (url.pathname === '/.well-known/oauth-protected-resource/mcp') {
      json(200, { resource: this.resourceUrl, authorization_servers: [this.#base], ...this.script.resourceMetadata });
      return;
    }
    if (url.pathname === '/.well-known/oauth-authorization-server') {
      json(200, this.metadataDocument(), this.script.metadataPadding);
      return;
    }
    if (url.pathname === '/authorize') {
      this.authorizeQueries.push(url.searchParams);
      const back = new URL(url.searchParams.get('redirect_uri') ?? 'http://127.0.0.1/cb');
      const code = `code-${randomBytes(12).toString('hex')}`;
      this.#codes.set(code, url.searchParams.get('code_challenge') ?? '');
      this.codesIssued.push(code);
      back.searchParams.set('code', code);
      const state = url.searchParams.get('state');
      if (state !== null) back.searchParams.set('state', state);
      if (this.script.callbackIss !== undefined) back.searchParams.set('iss', this.script.callbackIss);
      res.writeHead(302, { location: back.href }).end();
      return;
    }
    if (url.pathname === '/register' && req.method === 'POST') {
      json(201, { client_id: 'client-1', redirect_uris: (JSON.parse(body) as { redirect_uris?: unknown }).redirect_uris ?? [] });
      return;
    }
    if (url.pathname === '/token' && req.method === 'POST') {
      const form = new URLSearchParams(body);
      this.tokenForms.push(form);
      this.tokenAuthorizations.push(req.headers.authorization);
      // A real authorization server: a code is redeemed once, by the verifier of its challenge
      // (an injected, replayed or stolen code is refused invalid_grant).
      if (form.get('grant_type') === 'authorization_code') {
        const challenge = this.#codes.get(form.get('code') ?? '');
        this.#codes.delete(form.get('code') ?? '');
        const verifier = form.get('code_verifier') ?? '';
        if (challenge === undefined || createHash('sha256').update(verifier).digest('base64url') !== challenge) {
          json(400, { error: 'invalid_grant' });
          return;
        }
      }
      const access = `at-${randomBytes(16).toString('hex')}`;
      const refresh = `rt-${randomBytes(16).toString('hex')}`;
      const value = this.script.tokenResponse?.() ?? {
        access_token: access,
        token_type: 'Bearer',
        expires_in: 3600,
        refresh_token: refresh,
      };
      if (this.script.tokenResponse === undefined) {
        this.issued.push(access, refresh);
        this.accepted = access;
      }
      json(200, value, this.script.tokenPadding);
      return;
    }
    if (url.pathname === '/mcp') {
      if (this.accepted !== null && req.headers.authorization === `Bearer ${this.accepted}`) {
        if (this.script.insufficientScope === true) {
          res
            .writeHead(403, {
              'www-authenticate': `Bearer error="insufficient_scope", scope="admin", resource_metadata="${this.#base}/.well-known/oauth-protected-resource/mcp"`,
            })
            .end();
          return;
        }
        json(200, { ok: true, echo: this.echo });
        return;
      }
      res
        .writeHead(401, {
          'www-authenticate': `Bearer resource_metadata="${this.#base}/.well-known/oauth-protected-resource/mcp"`,
          'content-type': 'application/json',
        })
        .end('{"error":"invalid_token"}');
      return;
    }
    json(404, { error: 'not_found' });
  }
}
