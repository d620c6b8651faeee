import { z } from 'zod';
import { NullableTimestamp, Timestamp } from './common';

export const OpenSessionRequest = z
  .object({
    /** The agent this session serves (specsForSession's agent filter). */
    agent_id: z.string().min(1).max(128),
    /** Exact tool names or `domain.*`; absent: every tool the tenant may use. */
    enabled_tools: z.array(z.string().min(1).max(256)).max(1000).optional(),
    /** MCP servers (server_id) to prepare and pin; absent: every server configured for the tenant. */
    mcp_servers: z.array(z.string().min(1).max(64)).max(64).optional(),
  })
  .strict();
export type OpenSessionRequest = z.infer<typeof OpenSessionRequest>;

/** A pinned, model-visible tool definition in a provider-neutral shape (JSON Schema 2020-12 input). */
export const ToolDefinition = z
  .object({
    name: z.string(),
    description: z.string(),
    input_schema: z.record(z.string(), z.unknown()),
  })
  .strict();
export type ToolDefinition = z.infer<typeof ToolDefinition>;

/** What MCP preparation found for one server at session open. */
export const McpServerPreparation = z
  .object({
    server_id: z.string(),
    transport: z.enum(['stdio', 'http']),
    status: z.enum(['connected', 'pinned', 'failed']),
    reason_code: z.string().nullable(),
    tool_count: z.number().int().nonnegative(),
  })
  .strict();
export type McpServerPreparation = z.infer<typeof McpServerPreparation>;

export const Session = z
  .object({
    id: z.uuid(),
    agent_id: z.string(),
    status: z.enum(['open', 'closed']),
    /** § Advertisement is pinned: sha256 of the pinned specs. */
    tool_schema_sha256: z.string(),
    tools: z.array(ToolDefinition),
    created_at: Timestamp,
    closed_at: NullableTimestamp,
    /** Only in the answer to POST /v1/sessions. */
    mcp_servers: z.array(McpServerPreparation).optional(),
    /**
     * Only in the answer to POST /v1/sessions that named enabled_tools: the entries that match
     * no tool this tenant has (a misspelt name, or a `domain.*` with nothing under it).
     */
    unknown_tools: z.array(z.string()).optional(),
  })
  .strict();
export type Session = z.infer<typeof Session>;
