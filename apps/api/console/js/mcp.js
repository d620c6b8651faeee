// MCP servers (docs/adr/0046): the tenant's servers with their status, disable / enable (POST
// …/disable, PATCH {enabled: true}: mcp.servers.write), and the operator's, read-only. Names,
// endpoints and descriptions come from configuration or remote servers: shown as text.
import { api, ApiError } from './api.js';
import { el, errorLine, replace, when } from './dom.js';

export function mcpView(root, nav) {
  const status = el('div');
  const tenant = el('div', { id: 'mcp-tenant' });
  const operator = el('div', { id: 'mcp-operator' });
  replace(
    root,
    el('h2', {}, "This tenant's MCP servers"),
    status,
    tenant,
    el('h2', {}, "The operator's MCP servers (read-only)"),
    operator,
  );

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
      const [{ servers }, { servers: operatorServers }] = await Promise.all([
        api('GET', '/v1/mcp/servers'),
        api('GET', '/v1/mcp/operator-servers'),
      ]);
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
                    el('td', {}, el('button', { type: 'button', onclick: () => toggle(server) }, server.enabled ? 'Disable' : 'Enable')),
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
