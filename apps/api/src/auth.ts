import type { Principal } from '@veetbot/domain';
import { hasScope } from '@veetbot/domain';
import type { Context, MiddlewareHandler } from 'hono';
import { ApiError, forbiddenScope } from './api-error';
import { API_KEY_PATTERN, hashApiKey } from '@veetbot/composition';
import { keyCheckOf, type KeyCheck } from './api-key-cache';
import type { ApiDeps, ApiEnv } from './deps';

const challenge = { 'WWW-Authenticate': 'Bearer realm="veetbot"' };

/**
 * Tenant authentication: `Authorization: Bearer vbk_…`, looked up by its sha256 (the lookup
 * runs before the tenant is known, as the maintenance role). The key's row names the tenant,
 * the principal and its scopes; every later read runs under that tenant's row-level security.
 */
export function authenticate(deps: Pick<ApiDeps, 'stores' | 'apiKeyCache'>): MiddlewareHandler<ApiEnv> {
  return async (c, next) => {
    c.set('principal', await principalForAuthorization(deps, c.req.header('authorization')));
    await next();
  };
}

/**
 * The one key check (the REST routes and the MCP gateway face both use it): the principal an
 * `Authorization` header's key names, or a 401 ApiError (auth.missing, auth.invalid, auth.revoked).
 */
export async function principalForAuthorization(
  deps: Pick<ApiDeps, 'stores' | 'apiKeyCache'>,
  header: string | undefined,
): Promise<Principal> {
  if (header === undefined || header.trim() === '') {
    throw new ApiError(401, 'auth.missing', 'Send an API key as Authorization: Bearer vbk_….', { headers: challenge });
  }
  const match = /^Bearer\s+(\S+)$/i.exec(header.trim());
  const key = match?.[1];
  if (key === undefined || !API_KEY_PATTERN.test(key)) {
    throw new ApiError(401, 'auth.invalid', 'The API key is not valid.', { headers: challenge });
  }
  // docs/adr/0075: from the process's cache of active keys when it has one (a revoked key is
  // forgotten in every api process within a second), else one read of api_keys.
  const hash = hashApiKey(key);
  const check: KeyCheck =
    deps.apiKeyCache === undefined ? keyCheckOf(await deps.stores.apiKeys.findByHash(hash)) : await deps.apiKeyCache.check(hash);
  if (check.status === 'unknown') throw new ApiError(401, 'auth.invalid', 'The API key is not valid.', { headers: challenge });
  if (check.status === 'revoked') throw new ApiError(401, 'auth.revoked', 'The API key has been revoked.', { headers: challenge });
  return check.principal;
}

export function principalOf(c: Context<ApiEnv>): Principal {
  return c.get('principal');
}

/**
 * ADR 0017: the scopes that change a tenant's configuration are granted by name only. A
 * wildcard such as `mcp.*` (every MCP tool's scope, for an agent's key) must not carry
 * `mcp.servers.write` with it: the agent that calls tools would then choose where they go.
 */
export const EXPLICIT_SCOPES: ReadonlySet<string> = new Set([
  'mcp.servers.write',
  'secrets.read',
  'secrets.write',
  // docs/adr/0036: operator skills are TRUSTED_CONFIGURATION; an agent's tool wildcard must not author them.
  'skills.read',
  'skills.write',
  // docs/adr/0051: an answer is USER trust; an agent's tool wildcard must not let it answer itself.
  'questions.answer',
]);

export function requireScope(principal: Principal, scope: string): void {
  const held = EXPLICIT_SCOPES.has(scope) ? principal.scopes.includes(scope) : hasScope(principal, scope);
  if (!held) throw forbiddenScope(scope);
}
