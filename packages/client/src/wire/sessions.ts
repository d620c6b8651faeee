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
    /**
     * § Control tools, tool.call: pinned tools to advertise by a one-line entry of the deferred
     * tool index instead of a definition; the model reaches them through tool.call. Each must be
     * in the pin and not a control tool, and tool.call must be pinned (docs/adr/0035).
     */
    deferred_tools: z.array(z.string().min(1).max(256)).max(1000).optional(),
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
    /** For failed: egress, DNS or the connection, when the code alone does not say (docs/adr/0056). */
    detail: z.string().optional(),
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
    /** The model-visible definitions, deferred tools excepted (they are in the deferred tool index). */
    tools: z.array(ToolDefinition),
    /** Pinned tools advertised by a one-line entry (GET /v1/sessions/{session_id}/deferred-tools). */
    deferred_tools: z.array(z.string()),
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

/** One entry of the deferred tool index: the name and the first line of its description (at most 200 characters). */
export const DeferredToolEntry = z
  .object({
    name: z.string(),
    description: z.string(),
  })
  .strict();
export type DeferredToolEntry = z.infer<typeof DeferredToolEntry>;

/** GET /v1/sessions/{session_id}/deferred-tools: the session's deferred tool index. */
export const DeferredToolIndex = z
  .object({
    tools: z.array(DeferredToolEntry),
  })
  .strict();
export type DeferredToolIndex = z.infer<typeof DeferredToolIndex>;
