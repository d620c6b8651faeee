import { z } from 'zod';
import { IdempotencyClass, RiskLevel, SideEffectClass } from '@veetbot/domain';
import { Timestamp } from './common';

const AuthScheme = z.enum(['none', 'bearer', 'header', 'oauth2_client', 'env']);

/**
 * A tenant MCP server (§ Schema additions' mcp_servers columns). The shape is checked here;
 * the rules that span fields (§ Authentication, Gate 14: HTTP only for tenants, scheme and
 * reference pairing, the egress policy) are checked at write by the MCP adapter's
 * validateServerConfig, whose `mcp.config.*` code the API returns.
 */
export const CreateMcpServerRequest = z
  .object({
    server_id: z.string().min(1).max(64),
    transport: z.enum(['stdio', 'http']),
    endpoint: z.string().min(1).max(2048),
    auth_scheme: AuthScheme,
    auth_name: z.string().max(64).nullable().optional(),
    /** A broker reference (`env:NAME`, `file:/path`), never a secret. */
    credential_ref: z.string().min(1).max(1024).nullable().optional(),
    token_endpoint: z.string().max(2048).nullable().optional(),
    token_scopes: z.array(z.string().min(1).max(256)).max(64).nullable().optional(),
    side_effect: SideEffectClass.optional(),
    risk: RiskLevel.optional(),
    idempotency: IdempotencyClass.optional(),
    required_scopes: z.array(z.string().min(1).max(256)).max(64).optional(),
    timeout_seconds: z.number().int().positive().optional(),
    maximum_output_bytes: z.number().int().positive().optional(),
  })
  .strict();
export type CreateMcpServerRequest = z.infer<typeof CreateMcpServerRequest>;

/** server_id and transport never change; everything else may. */
export const UpdateMcpServerRequest = CreateMcpServerRequest.omit({ server_id: true, transport: true })
  .partial()
  .extend({ enabled: z.boolean().optional() })
  .strict();
export type UpdateMcpServerRequest = z.infer<typeof UpdateMcpServerRequest>;

export const McpServer = z
  .object({
    server_id: z.string(),
    transport: z.enum(['stdio', 'http']),
    endpoint: z.string(),
    auth_scheme: AuthScheme,
    auth_name: z.string().nullable(),
    credential_ref: z.string().nullable(),
    token_endpoint: z.string().nullable(),
    token_scopes: z.array(z.string()).nullable(),
    side_effect: SideEffectClass,
    risk: RiskLevel,
    idempotency: IdempotencyClass,
    required_scopes: z.array(z.string()),
    timeout_seconds: z.number().int(),
    maximum_output_bytes: z.number().int(),
    enabled: z.boolean(),
    created_at: Timestamp,
  })
  .strict();
export type McpServer = z.infer<typeof McpServer>;

export const McpServerList = z.object({ servers: z.array(McpServer) }).strict();
export type McpServerList = z.infer<typeof McpServerList>;

/** An operator (stdio) server as tenants may see it: read-only, no credential reference. */
export const OperatorMcpServer = z
  .object({
    server_id: z.string(),
    transport: z.enum(['stdio', 'http']),
    endpoint: z.string(),
    args: z.array(z.string()),
    auth_scheme: AuthScheme,
    side_effect: SideEffectClass,
    risk: RiskLevel,
    idempotency: IdempotencyClass,
    required_scopes: z.array(z.string()),
    timeout_seconds: z.number().int(),
    maximum_output_bytes: z.number().int(),
    enabled: z.boolean(),
  })
  .strict();
export type OperatorMcpServer = z.infer<typeof OperatorMcpServer>;

export const OperatorMcpServerList = z.object({ servers: z.array(OperatorMcpServer) }).strict();
export type OperatorMcpServerList = z.infer<typeof OperatorMcpServerList>;
