import type { Principal, ToolResultItem, TrustLevel } from '@veetbot/domain';

/*
 * What the MCP gateway face (packages/mcp-gateway, docs/adr/0044) needs from the runtime: a
 * binding of MCP traffic to one veetbot session and run, the session's pinned tools, and a call
 * submitted through the ONE pipeline (a stored step the worker runs, exactly as
 * POST /v1/runs/{id}/steps stores one) with its outcome read from the rows. The api implements
 * it; the gateway never sees a store, the executor or the runtime.
 */

/** One MCP client's veetbot session and run, under the principal its API key names. */
export interface GatewayBinding {
  readonly principal: Principal;
  readonly sessionId: string;
  readonly runId: string;
}

/** A pinned tool as the session pinned it (§ Advertisement is pinned). */
export interface GatewayTool {
  readonly name: string;
  readonly description: string;
  readonly inputSchema: Record<string, unknown>;
}

export interface GatewayOpenRequest {
  readonly agentId: string;
  readonly deadlineSeconds: number;
}

export interface GatewayCall {
  readonly callId: string;
  readonly toolName: string;
  readonly arguments: Record<string, unknown>;
  readonly contextTrust: readonly TrustLevel[];
}

export interface GatewayCallOptions {
  /** How long to wait for the call to settle before answering `running`. */
  readonly waitMs: number;
  /** The MCP request's cancellation (notifications/cancelled, a closed request). */
  readonly signal: AbortSignal;
  /** Called between waits while the call is still running (MCP progress). */
  readonly onWaiting?: (elapsedMs: number) => void;
}

/** How a submitted call stands when the gateway answers. */
export type GatewayCallResult =
  | { readonly kind: 'concluded'; readonly item: ToolResultItem; readonly invocationId: string | null; readonly stepNumber: number }
  | {
      readonly kind: 'waiting_for_approval';
      readonly callId: string;
      readonly invocationId: string;
      readonly approvalId: string | null;
      readonly stepNumber: number;
    }
  | {
      readonly kind: 'suspended';
      readonly callId: string;
      readonly invocationId: string;
      readonly suspendedKind: string;
      readonly stepNumber: number;
    }
  | { readonly kind: 'running'; readonly callId: string; readonly stepNumber: number }
  /** Refused before the pipeline: the run or session no longer takes calls, or the call id names another call. */
  | { readonly kind: 'refused'; readonly code: GatewayRefusal; readonly message: string };

/**
 * `tool.unknown`: the name is not in the session's pin at all — MCP's "unknown tool", a JSON-RPC
 * -32602 on the wire, with no step and no row (docs/adr/0061).
 */
export type GatewayRefusal = 'run.not_active' | 'run.waiting_for_user' | 'session.closed' | 'step.conflict' | 'not_found' | 'tool.unknown';

export interface GatewayRuntime {
  /** A stateful client's initialize: open a session (discovery, pin) and start a run in it. */
  open(principal: Principal, request: GatewayOpenRequest): Promise<GatewayBinding>;
  /** A request naming its run: the binding, or null when this tenant has no such run. */
  bindRun(principal: Principal, runId: string): Promise<GatewayBinding | null>;
  /** The session's model-visible pinned tools, exactly as pinned. */
  listTools(binding: GatewayBinding): Promise<readonly GatewayTool[]>;
  /** Submit one call as a step of the bound run (or find the step already holding its call id). */
  call(binding: GatewayBinding, call: GatewayCall, options: GatewayCallOptions): Promise<GatewayCallResult>;
  /** The pipeline's cancellation: the run is cancelled, its in-flight calls see their token. */
  cancel(binding: GatewayBinding): Promise<void>;
  /** The MCP session ended (DELETE): the veetbot session is closed and its transports released. */
  close(binding: GatewayBinding): Promise<void>;
}
