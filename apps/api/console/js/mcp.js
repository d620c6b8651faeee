// MCP servers (docs/adr/0046): the tenant's servers with their status, disable / enable (POST
// …/disable, PATCH {enabled: true}: mcp.servers.write), and the operator's, read-only; each
// server's catalog generations and what each changed (GET …/{server_id}/catalog). Names,
// endpoints and descriptions come from configuration or remote servers: shown as text.
// The signed-in principal's own delegated grants (docs/adr/0080): server, issuer, times — never
// a token — each with Revoke (DELETE /v1/mcp/authorizations/{server_id}).
import { api, ApiError } from './api.js';
import { el, errorLine, replace, when } from './dom.js';

export function mcpView(root, nav) {
  const status = el('div');
  const tenant = el('div', { id: 'mcp-tenant' });
  const operator = el('div', { id: 'mcp-operator' });
  const catalog = el('div', { id: 'mcp-catalog' });
  const grants = el('div', { id: 'mcp-grants' });
  replace(
    root,
    el('h2', {}, "This tenant's MCP servers"),
    status,
    tenant,
    el('h2', {}, "The operator's MCP servers (read-only)"),
    operator,
    el('h2', {}, "Your authorizations (MCP servers this key's principal has granted)"),
    grants,
    catalog,
  );

  async function revoke(serverId) {
    try {
      await api('DELETE', `/v1/mcp/authorizations/${encodeURIComponent(serverId)}`);
      replace(status, el('p', { class: 'notice' }, `Authorization for ${serverId} revoked.`));
    } catch (error) {
      replace(status, errorLine(error));
    }
    void refresh();
  }

  function showGrants(authorizations) {
    replace(
      grants,
      authorizations.length === 0
        ? el('p', {}, 'None granted.')
        : el(
            'table',
            {},
            el(
              'thead',
              {},
              el(
                'tr',
                {},
                ['server', 'issuer', 'expires', 'granted', ''].map((h) => el('th', {}, h)),
              ),
            ),
            el(
              'tbody',
              {},
              authorizations.map((grant) =>
                el(
                  'tr',
                  { 'data-grant': grant.server_id },
                  el('td', {}, grant.server_id),
                  el('td', {}, grant.issuer),
                  el('td', {}, grant.expires_at === null ? '—' : when(grant.expires_at)),
                  el('td', {}, when(grant.created_at)),
                  el(
                    'td',
                    { class: 'actions' },
                    el('button', { type: 'button', 'data-revoke': grant.server_id, onclick: () => revoke(grant.server_id) }, 'Revoke'),
                  ),
                ),
              ),
            ),
          ),
    );
  }

  async function showCatalog(serverId) {
    replace(catalog, el('h2', {}, `Catalog of ${serverId}`), 'Loading…');
    try {
      const { generations } = await api('GET', `/v1/mcp/servers/${encodeURIComponent(serverId)}/catalog`);
      replace(
        catalog,
        el('h2', {}, `Catalog of ${serverId}: ${generations.length} generation(s), newest first`),
        [...generations].reverse().map((generation) =>
          el(
            'article',
            { class: 'card', 'data-catalog-hash': generation.catalog_hash },
            el('h3', {}, when(generation.discovered_at)),
            el('p', {}, el('code', {}, generation.catalog_hash)),
            el(
              'p',
              { 'data-testid': 'diff' },
              `added: ${generation.diff.added.join(', ') || '—'}; removed: ${generation.diff.removed.join(', ') || '—'}; changed: ${generation.diff.changed.join(', ') || '—'}`,
            ),
            el(
              'ul',
              {},
              generation.tools.map((tool) =>
                el(
                  'li',
                  {},
                  `${tool.registry_name} (schema ${tool.input_schema_sha256.slice(0, 12)}…)${tool.withdrawn_at === null ? '' : `, withdrawn ${tool.withdrawn_at}`}`,
                ),
              ),
            ),
          ),
        ),
      );
    } catch (error) {
      replace(catalog, el('h2', {}, `Catalog of ${serverId}`), errorLine(error));
    }
  }

  const catalogButton = (serverId) =>
    el('button', { type: 'button', 'data-catalog': serverId, onclick: () => showCatalog(serverId) }, 'Catalog');

  async function toggle(server) {
    try {
      if (server.enabled) await api('POST', `/v1/mcp/servers/${encodeURIComponent(server.server_id)}/disable`);
      else await api('PATCH', `/v1/mcp/servers/${encodeURIComponent(server.server_id)}`, { enabled: true });
      replace(status, el('p', { class: 'notice' }, `${server.server_id} ${server.enabled ? 'disabled' : 'enabled'}.`));
    } catch (error) {
      replace(status, errorLine(error));
    }
    void refresh();
  }

  async function refresh() {
    try {
      const [{ servers }, { servers: operatorServers }, { authorizations }] = await Promise.all([
        api('GET', '/v1/mcp/servers'),
        api('GET', '/v1/mcp/operator-servers'),
        api('GET', '/v1/mcp/authorizations'),
      ]);
      showGrants(authorizations);
      replace(
        tenant,
        servers.length === 0
          ? el('p', {}, 'None registered.')
          : el(
              'table',
              {},
              el(
                'thead',
                {},
                el(
                  'tr',
                  {},
                  ['server', 'transport', 'endpoint', 'status', 'created', ''].map((h) => el('th', {}, h)),
                ),
              ),
              el(
                'tbody',
                {},
                servers.map((server) =>
                  el(
                    'tr',
                    { 'data-server-id': server.server_id },
                    el('td', {}, server.server_id),
                    el('td', {}, server.transport),
                    el('td', {}, server.endpoint),
                    el('td', { 'data-testid': 'enabled' }, server.enabled ? 'enabled' : 'disabled'),
                    el('td', {}, when(server.created_at)),
                    el(
                      'td',
                      { class: 'actions' },
                      el(
                        'button',
                        { type: 'button', 'data-toggle': server.server_id, onclick: () => toggle(server) },
                        server.enabled ? 'Disable' : 'Enable',
                      ),
                      catalogButton(server.server_id),
                    ),
                  ),
                ),
              ),
            ),
      );
      replace(
        operator,
        operatorServers.length === 0
          ? el('p', {}, 'None configured.')
          : el(
              'ul',
              {},
              operatorServers.map((server) =>
                el('li', {}, `${server.server_id} (${server.transport}) ${server.enabled ? 'enabled' : 'disabled'}`),
              ),
            ),
      );
    } catch (error) {
      if (error instanceof ApiError && error.status === 401) return nav.signedOut(error);
      replace(status, errorLine(error));
    }
  }

  void refresh();
  return () => {};
}
