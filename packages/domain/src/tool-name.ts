import { createHash } from 'node:crypto';
import { z } from 'zod';
import { RegistrationError } from './errors';

/** § Names: at least one dot, lowercase, no leading digit, no hyphen; at most 96 characters. */
export const TOOL_NAME_PATTERN = /^[a-z][a-z0-9_]*(\.[a-z][a-z0-9_]*)+$/;
export const TOOL_NAME_MAX_LENGTH = 96;

export function isValidToolName(name: string): boolean {
  return name.length <= TOOL_NAME_MAX_LENGTH && TOOL_NAME_PATTERN.test(name);
}

export const ToolName = z.string().refine(isValidToolName, { message: 'invalid tool name' });

/** The first segment of a registry name. */
export function toolDomain(name: string): string {
  const dot = name.indexOf('.');
  return dot === -1 ? name : name.slice(0, dot);
}

/**
 * § MCP: server_id matches ^[a-z][a-z0-9_]*$. The length cap (32) is ours: it keeps
 * "mcp." + server_id + "." + a 48-character normalized name under the 96-character limit
 * (docs/adr/0003).
 */
export const SERVER_ID_PATTERN = /^[a-z][a-z0-9_]*$/;
export const SERVER_ID_MAX_LENGTH = 32;

export function isValidServerId(serverId: string): boolean {
  return serverId.length <= SERVER_ID_MAX_LENGTH && SERVER_ID_PATTERN.test(serverId);
}

const NORMALIZED_MAX = 48;
const TRUNCATED_PREFIX = 40;

/**
 * § The registry: normalized_remote_name, a pure function of the name the server reported.
 * 1. NFC, lowercase. 2. Non-[a-z0-9_] -> _. 3. Collapse _ runs; strip edges.
 * 4. Empty or leading digit -> prefix t_. 5. Over 48 -> first 40 + _ + 7 hex of sha256(remote).
 */
export function normalizeRemoteToolName(remote: string): string {
  let name = remote.normalize('NFC').toLowerCase();
  // Iterate by code point so a surrogate pair becomes one _, not two.
  name = Array.from(name, (ch) => (/^[a-z0-9_]$/.test(ch) ? ch : '_')).join('');
  name = name.replace(/_+/g, '_').replace(/^_+|_+$/g, '');
  if (name === '' || /^[0-9]/.test(name)) name = `t_${name}`;
  if (name.length > NORMALIZED_MAX) {
    const digest = createHash('sha256').update(remote, 'utf8').digest('hex').slice(0, 7);
    name = `${name.slice(0, TRUNCATED_PREFIX)}_${digest}`;
  }
  return name;
}

/** mcp.{server_id}.{normalized_remote_name} */
export function mcpToolName(serverId: string, remote: string): string {
  if (!isValidServerId(serverId)) {
    throw new RegistrationError(
      'registry.server_id_invalid',
      `mcp.${serverId}`,
      `server_id must match ${SERVER_ID_PATTERN} and be at most ${SERVER_ID_MAX_LENGTH} characters`,
    );
  }
  return `mcp.${serverId}.${normalizeRemoteToolName(remote)}`;
}
