import { z } from 'zod';
import { Timestamp } from './common';

/**
 * docs/adr/0080: one delegated grant the calling principal holds for an MCP server (issue 28
 * item 4). What a principal may read back: the server, the issuer and times; never a token.
 */
export const McpAuthorization = z.object({
  server_id: z.string(),
  /** The authorization server that issued the tokens. */
  issuer: z.string(),
  /** The access token's expiry (a refresh may renew it); null when the server gave none. */
  expires_at: Timestamp.nullable(),
  created_at: Timestamp,
  updated_at: Timestamp,
});
export type McpAuthorization = z.infer<typeof McpAuthorization>;

export const McpAuthorizationList = z.object({ authorizations: z.array(McpAuthorization) });
export type McpAuthorizationList = z.infer<typeof McpAuthorizationList>;
