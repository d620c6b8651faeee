import { PutSecretRequest, Secret, SecretList } from '@veetbot/client';
import { isValidSecretName, SECRET_NAME_PATTERN } from '@veetbot/domain';
import type { TenantSecretSummary } from '@veetbot/ports';
import { ApiError, notFound } from '../api-error';
import type { ApiDeps } from '../deps';
import type { RouteTable } from '../routing';

/** ADR 0017: who may create, replace and delete the tenant's secrets. */
export const SECRETS_WRITE = 'secrets.write';
/** ADR 0017: who may list their names (a name says which services the tenant uses). */
export const SECRETS_READ = 'secrets.read';

const iso = (d: Date | null) => (d === null ? null : d.toISOString());
const secretWire = (s: TenantSecretSummary): Secret => ({ name: s.name, created_at: iso(s.createdAt)!, rotated_at: iso(s.rotatedAt) });

/**
 * The tenant's own secrets (ADR 0017), referenced by its MCP servers as `secret:NAME`. The
 * value is write-only: sealed (AES-256-GCM, bound to the tenant and the name) before it reaches
 * the store, and never returned, logged or put in an event.
 */
export function secretRoutes(routes: RouteTable, deps: ApiDeps): void {
  routes.add(
    {
      method: 'put',
      path: '/v1/secrets/:name',
      operationId: 'putSecret',
      summary: 'Create (201) or replace (200, rotated) a secret. The value is write-only; a PUT also re-encrypts under the current key.',
      tag: 'secrets',
      scope: SECRETS_WRITE,
      body: PutSecretRequest,
      responses: { 201: { description: 'Created.', schema: Secret }, 200: { description: 'Replaced (rotated).', schema: Secret } },
    },
    async (c, { body, principal }) => {
      const name = c.req.param('name') ?? '';
      if (!isValidSecretName(name))
        throw new ApiError(400, 'request.invalid', `Invalid request at path.name: expected ${SECRET_NAME_PATTERN}.`);
      const tenantId = principal.tenant_id;
      const sealed = deps.secretKeyring.seal({ tenantId, name }, body.value);
      const { created, secret } = await deps.stores.tenantSecrets.put(tenantId, { name, ...sealed, at: deps.clock.now() });
      return c.json(secretWire(secret), created ? 201 : 200);
    },
  );

  routes.add(
    {
      method: 'get',
      path: '/v1/secrets',
      operationId: 'listSecrets',
      summary: "The tenant's secrets: names and times, never values.",
      tag: 'secrets',
      scope: SECRETS_READ,
      responses: { 200: { description: 'The secrets.', schema: SecretList } },
    },
    async (c, { principal }) => c.json({ secrets: (await deps.stores.tenantSecrets.list(principal.tenant_id)).map(secretWire) }, 200),
  );

  routes.add(
    {
      method: 'delete',
      path: '/v1/secrets/:name',
      operationId: 'deleteSecret',
      summary: 'Delete a secret. Servers that reference it fail to connect (tool.auth_failed) until it is PUT again.',
      tag: 'secrets',
      scope: SECRETS_WRITE,
      responses: { 204: { description: 'Deleted.' } },
    },
    async (c, { principal }) => {
      const name = c.req.param('name') ?? '';
      // A name outside the grammar cannot name anything: the same 404 as a missing one.
      if (!isValidSecretName(name) || !(await deps.stores.tenantSecrets.delete(principal.tenant_id, name))) throw notFound();
      return c.body(null, 204);
    },
  );
}
