import type { Principal, ToolSource, ToolSpec, ToolSpecInput } from '@veetbot/domain';
import type { Tool, ToolCallLimits } from './tool';
import type { PolicyEngine } from './policy-engine';

/** specsForSession's agent filter: which tools this agent may use at all. */
export interface AgentSpec {
  readonly agentId: string;
  /** Exact names, or `domain.*`. Undefined: every registered tool. */
  readonly enabledTools?: readonly string[];
}

/** specsForSession's environment filter. */
export interface RuntimeEnvironment {
  /** Deployment flags (e.g. AGENT_EMAIL_MODE_ENABLED) that gate flagged domains. */
  readonly flags: Readonly<Record<string, boolean>>;
  /** Target kinds this runtime can route to (a runtime without a sandbox offers no sandbox tools). */
  readonly targetKinds: readonly string[];
  /** MCP servers (by server_id) whose tools this session may pin. Undefined: all registered. */
  readonly mcpServers?: readonly string[];
}

/** The pinned set a session advertises, addressable by its hash (§ Resolution). */
export interface PinnedToolSet {
  readonly toolSchemaSha256: string;
  readonly specs: readonly ToolSpec[];
  readonly toolNames: readonly string[];
}

export interface RegistrationRejection {
  readonly name: string;
  readonly code: `registry.${string}` | `schema.${string}`;
  readonly reason: string;
}

/** § Skills: RegistrationReport records every rejection with a reason, not a count. */
export interface RegistrationReport {
  readonly source: ToolSource;
  readonly registered: readonly string[];
  readonly rejected: readonly RegistrationRejection[];
}

/** A dynamic declaration: its spec plus the callable that serves it (an MCP or device adapter). */
export interface DynamicTool {
  readonly spec: ToolSpecInput;
  /** The route's call limits (an MCP server's request timeout); the registry keeps them with the tool. */
  readonly limits?: ToolCallLimits;
  execute: Tool['execute'];
}

/** § Resolution: the registry port. */
export interface ToolRegistry {
  /** Throws ToolNotFoundError. With a version, that exact version. */
  get(name: string, version?: string): Tool;
  specsForSession(agent: AgentSpec, principal: Principal, profile: PolicyEngine, environment: RuntimeEnvironment): PinnedToolSet;
  /** A pinned set fetched again by its tool_schema_sha256. */
  pinned(toolSchemaSha256: string): PinnedToolSet | undefined;
  registerDynamic(tools: readonly DynamicTool[], source: ToolSource): Promise<RegistrationReport>;
  /** The latest version of every registered tool, sorted by name. */
  list(): readonly ToolSpec[];
}

/**
 * Registries by tenant. Builtins are the same for every tenant; dynamic tools (MCP, device)
 * are a tenant's own — two tenants may both configure a server called `acme`, and neither may
 * ever resolve the other's tools.
 */
export interface TenantToolRegistries {
  forTenant(tenantId: string): ToolRegistry;
}
