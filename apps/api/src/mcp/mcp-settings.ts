import type { McpGatewaySettings } from '@veetbot/mcp-gateway';

/**
 * The gateway's DNS-rebinding allowlists from the environment (docs/adr/0044):
 * VEETBOT_MCP_ALLOWED_HOSTS and VEETBOT_MCP_ALLOWED_ORIGINS, comma-separated hostnames (no
 * scheme, no port; IPv6 in brackets). Unset: the localhost names only, which is right for the
 * embedded default listening on 127.0.0.1; a deployment behind a proxy names its own host.
 */
export function mcpSettingsFromEnv(env: Readonly<Record<string, string | undefined>>): Partial<McpGatewaySettings> {
  const list = (value: string | undefined) =>
    value
      ?.split(',')
      .map((s) => s.trim())
      .filter((s) => s !== '');
  const hosts = list(env.VEETBOT_MCP_ALLOWED_HOSTS);
  const origins = list(env.VEETBOT_MCP_ALLOWED_ORIGINS);
  return {
    ...(hosts === undefined || hosts.length === 0 ? {} : { allowedHostnames: hosts }),
    ...(origins === undefined || origins.length === 0 ? {} : { allowedOrigins: origins }),
  };
}
